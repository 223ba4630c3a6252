"""`fanout sim`: serve the offline simulator until Ctrl-C or SIGTERM.

A stand-in for OpenRouter, SearXNG and the web, for testing and demos. Its
models are seeded rules over a small bundled corpus, not language models.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import ipaddress
import json
import math
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from fanout.cli.terminal import say as safe_say
from fanout.cli.epilog import BAD_INPUT, epilog
from fanout.base.errors import ConfigError
from fanout.base.validate import package_data
from fanout.cli.outputs import add_output, outputs_of

if TYPE_CHECKING:
    from fanout.sim import SimConfig, WorldSettings

DESCRIPTION = (
    "Start the offline simulator: a stand-in for OpenRouter, SearXNG and the web, for testing and demos. "
    "Its models are simulated (seeded rules over a small bundled corpus), not language models; "
    "their verdicts say nothing about real models."
)


EPILOG = epilog(
    environment=[],
    exit_codes=["0 stopped by Ctrl-C or SIGTERM, or --labels-only done", BAD_INPUT + ", e.g. the port is taken"],
    examples=["fanout sim --port 8765 --profile demo --labels-out runs/labels.yaml",
              "fanout sim --fault http_502=0.1 --fault deepseek/deepseek-v3.2:rpm=20",
              "fanout sim --stream-rate 10 --revert-delay 300 --fault stream:drop_every=500"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("--host", default="127.0.0.1", metavar="HOST", help="address to listen on (default 127.0.0.1, loopback only)")
    parser.add_argument("--port", type=int, default=8765, metavar="N", help="port (default 8765; 0 picks a free one)")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed for every simulated choice and fault (default 0)")
    parser.add_argument(
        "--profile",
        default="default",
        metavar="NAME|FILE",
        help="fault profile: bundled `default` (no faults, small latency), `clean` (no faults, no latency), "
        "`demo` (a little of every survivable fault), or a YAML file",
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="[MODEL:]KEY=VALUE",
        help="override the profile, e.g. http_502=0.1, deepseek/deepseek-v3.2:rpm=20, search:unresponsive=0.2 (repeatable)",
    )
    parser.add_argument("--latency-scale", type=float, default=None, metavar="X", help="multiply every latency (0 = none)")
    add_output(parser, "--labels-out", type=Path, default=None, metavar="FILE", ours=_is_corpus_labels,
               help="write the corpus truth {labels: [{rcid, truth}]} (JSON if FILE ends in .json, else YAML)")
    add_output(parser, "--texts-out", type=Path, default=None, metavar="FILE", ours=_is_sample_texts,
               help="write the sample texts the simulator knows (YAML, each with its claims labelled), an "
                    "input for `fanout run --workload claims`")
    parser.add_argument("--labels-only", action="store_true",
                        help="write --labels-out (and --texts-out) and exit without serving")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing --labels-out file that holds other labels")
    parser.add_argument("--require-auth", action="store_true", help="refuse chat requests without a Bearer token")
    parser.add_argument("--stream-rate", type=float, default=2.0, metavar="N",
                        help="edits a second on the simulated Wikidata's live stream, 1 to 10 (default 2)")
    parser.add_argument("--revert-delay", type=float, default=60.0, metavar="S",
                        help="seconds (about) before patrollers revert simulated vandalism (default 60)")


def run(args: argparse.Namespace) -> int:
    from fanout.sim import SimConfig, load_corpus, load_profile, with_overrides

    profile = with_overrides(load_profile(args.profile), args.fault)
    # NaN passes `< 0` and inf made every simulated reply wait forever, so both are refused by name.
    if args.latency_scale is not None and not (0 <= args.latency_scale < math.inf):
        raise ConfigError(f"--latency-scale must be a finite number of 0 or more (got {args.latency_scale:g})")
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535 (got {args.port})")
    world = _world(args)
    corpus = load_corpus()
    if args.labels_out is not None:
        text = labels_text(args.labels_out, corpus.labels())
        outputs_of(args).write(args.labels_out, "--labels-out", text, _is_corpus_labels)
    elif args.labels_only and args.texts_out is None:
        raise ConfigError("--labels-only needs --labels-out FILE (or --texts-out FILE)")
    if args.texts_out is not None:
        outputs_of(args).write(args.texts_out, "--texts-out", sample_texts(), _is_sample_texts)
        say(f"wrote the sample texts to {args.texts_out}")
    if args.labels_only:
        if args.labels_out is not None:
            say(f"wrote {len(corpus.labels())} labels to {args.labels_out}")
        return 0
    config = SimConfig(
        seed=args.seed, profile=profile, latency_scale=args.latency_scale, corpus=corpus, require_auth=args.require_auth,
        world=world,
    )
    return asyncio.run(serve(config, args))


def _world(args: argparse.Namespace) -> WorldSettings:
    """The live stream's pace: Wikidata's own is about 10 edits a second, so 1 to 10 covers a quiet to a busy wiki."""
    from fanout.sim import WorldSettings

    if not 1 <= args.stream_rate <= 10:
        raise ConfigError(f"--stream-rate must be between 1 and 10 edits a second (got {args.stream_rate:g})")
    if not 0 <= args.revert_delay <= 30 * 86400:
        raise ConfigError(f"--revert-delay must be between 0 s and 30 days (got {args.revert_delay:g})")
    return WorldSettings(rate=args.stream_rate, revert_delay_s=args.revert_delay)


def labels_text(path: Path, labels: list[dict[str, object]]) -> str:
    """The labels file's text: JSON if `path` ends in .json, else YAML."""
    data = {"labels": labels}
    return json.dumps(data, indent=2) + "\n" if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)


def _is_corpus_labels(head: bytes) -> bool:
    """The corpus's labels are always the same: a file that holds them (or the start of them) is ours to rewrite."""
    from fanout.sim import load_corpus

    labels = load_corpus().labels()
    return any(labels_text(Path(name), labels).encode().startswith(head) for name in ("x.json", "x.yaml"))


def sample_texts() -> str:
    """The bundled sample texts, labels and all (the simulator's claims world is made for them)."""
    return package_data("sample_texts.yaml").read_text(encoding="utf-8")


def _is_sample_texts(head: bytes) -> bool:
    """The sample texts never change: a file that holds them (or the start of them) is ours to rewrite."""
    return sample_texts().encode().startswith(head)


async def serve(config: SimConfig, args: argparse.Namespace) -> int:
    from fanout.sim import NOTICE, running_simulator

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        async with running_simulator(config, host=args.host, port=args.port) as sim:
            scale = sim.state.latency_scale
            say(NOTICE)
            if not _is_loopback(args.host):
                say(f"warning: listening on {args.host}, not loopback: anyone who can reach it can use it")
            say(f"profile: {sim.state.profile.name} (seed {config.seed}, latency x{scale:g})")
            say(f"OpenAI-compatible API: {sim.api_base}")
            say(f"SearXNG:               {sim.searxng_url}")
            say(f"Wikipedia-style API:   {sim.wikipedia_api_url} (search config: endpoints: {{wikipedia: URL}})")
            say(f"PubMed-style API:      {sim.pubmed_url} (endpoints: {{pubmed: URL}}; articles at "
                f"{sim.pubmed_article_url}: provider_settings: {{pubmed: {{article_url: ...}}}})")
            say(f"SerpAPI-style API:     {sim.serpapi_url} (endpoints: {{serpapi: URL}}, any SERPAPI_API_KEY)")
            say(f"arXiv-style API:       {sim.arxiv_url} (endpoints: {{arxiv: URL}}; the sample texts' preprints)")
            say(f"Tally:                 {sim.base_url}/stats")
            say(f"Labels:                {sim.base_url}/labels")
            say(f"Live stream:           {sim.stream_url}/recentchange,mediawiki.revision-tags-change "
                f"({sim.state.world.settings.rate:g} edits a second)")
            say(f"Wikidata API:          {sim.wikidata_api_url} (--api-url for fetch-edits and outcomes)")
            say(f"Revert risk:           {sim.revertrisk_url}")
            say(f"Use: fanout run SNAPSHOT --base-url {sim.api_base} --searxng-url {sim.searxng_url} --allow-private-urls")
            say("Ctrl-C stops the simulator.")
            await stop.wait()
            tally = sim.stats()
            say(
                f"fanout sim: stopped after {sum(tally['completions'].values())} completions, "
                f"${tally['cost_usd']['total']:.6f} simulated spend"
            )
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {args.port} on {args.host} is in use; pick another with --port") from exc
        raise ConfigError(f"cannot listen on {args.host}:{args.port}: {exc}") from exc
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    return 0


def say(line: str) -> None:
    safe_say(line, flush=True)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
