"""Corpus pages as the web serves them: the article buried in a site's chrome.

Real pages put navigation, a cookie banner, advertisements, "most read" lists
and a footer around the article; web_fetch's extraction must throw all that
away. So every simulated page carries the same clutter, and tests check that
trafilatura recovers the article alone.
"""

from __future__ import annotations

import datetime as dt
from html import escape

from fanout.sim.corpus_types import Page
from fanout.sim.dice import dice

SITE_NAMES = {
    "www.bbc.co.uk": "BBC News",
    "www.theguardian.com": "The Guardian",
    "www.britannica.com": "Britannica",
    "catalogue.bnf.fr": "BnF Catalogue général",
    "d-nb.info": "Deutsche Nationalbibliothek",
    "www.imdb.com": "IMDb",
    "www.nobelprize.org": "NobelPrize.org",
    "statice.is": "Statistics Iceland",
    "www.ons.gov.uk": "Office for National Statistics",
}

NAV_ITEMS = ("Home", "News", "Sport", "Business", "Culture", "Science", "Travel", "Opinion")
FOOTER_LINKS = ("About us", "Contact", "Terms of use", "Privacy policy", "Cookie settings", "Accessibility", "Advertise with us")
ADS = (
    "Save 40% on fibre broadband this month",
    "Compare cheap flights to 400 destinations",
    "Top-rated robot vacuum cleaners of 2025",
    "Earn 5% interest on your savings today",
    "Learn a language in 10 minutes a day",
)
MOST_READ = (
    "Ten places to visit before they change forever",
    "The recipe everyone is talking about this week",
    "Why your phone battery drains overnight",
    "Markets rally as inflation eases",
    "Inside the restoration of a medieval library",
    "How to sleep better, according to science",
)


def site_name(page: Page) -> str:
    return SITE_NAMES.get(page.host) or page.byline or page.host


def render_page(page: Page, seed: int = 0) -> str:
    """The full HTML document for a corpus page."""
    rng = dice(seed, "chrome", page.address)
    site = site_name(page)
    ads = rng.sample(ADS, 3)
    most_read = rng.sample(MOST_READ, 4)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            _head(page, site),
            "<body>",
            _cookie_banner(site),
            _site_header(site),
            _ad(ads[0], "ad-leaderboard"),
            '<main id="main-content">',
            f'<nav class="breadcrumbs" aria-label="Breadcrumb"><a href="/">Home</a> › <a href="/section">{escape(page.section or "Section")}</a></nav>',
            _article(page, ads[1]),
            _aside(most_read, ads[2]),
            "</main>",
            _newsletter(site),
            _footer(site),
            '<script src="/static/analytics.js" async></script>',
            "</body>",
            "</html>",
        ]
    )


def render_error_page(status: int, host: str) -> str:
    """What a blocked or dead link returns: no article to extract."""
    message = {403: "Access denied. Subscribe to continue reading.", 404: "Sorry, we couldn't find that page."}.get(
        status, "Something went wrong."
    )
    return (
        f"<!DOCTYPE html><html><head><title>{status}</title></head><body>"
        f"<header><a href='/'>{escape(host)}</a></header><h1>{status}</h1><p>{escape(message)}</p></body></html>"
    )


def _head(page: Page, site: str) -> str:
    description = escape(page.snippet(160), quote=True)
    lines = [
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(page.title)} | {escape(site)}</title>",
        f'<meta name="description" content="{description}">',
        f'<meta property="og:title" content="{escape(page.title, quote=True)}">',
        f'<meta property="og:site_name" content="{escape(site, quote=True)}">',
        f'<link rel="canonical" href="https://{escape(page.address, quote=True)}">',
    ]
    if page.byline:
        lines.append(f'<meta name="author" content="{escape(page.byline, quote=True)}">')
    if page.date:
        lines.append(f'<meta property="article:published_time" content="{page.date}T00:00:00Z">')
    lines += [
        "<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}</script>",
        "<style>.cookie-consent{position:fixed;bottom:0}.ad-slot{min-height:90px}</style>",
        "</head>",
    ]
    return "\n".join(lines)


def _cookie_banner(site: str) -> str:
    return (
        '<div id="cookie-banner" class="cookie-consent" role="dialog" aria-label="Cookie consent">'
        f"<p>{escape(site)} and our partners use cookies to personalise content and advertising. "
        'Choose "Accept all cookies" to agree, or manage your preferences.</p>'
        '<button class="accept">Accept all cookies</button> <button class="manage">Manage preferences</button></div>'
    )


def _site_header(site: str) -> str:
    items = "".join(f'<li><a href="/{item.lower()}">{item}</a></li>' for item in NAV_ITEMS)
    return (
        f'<header class="site-header"><a class="logo" href="/">{escape(site)}</a>'
        f'<nav class="primary-nav" aria-label="Main"><ul>{items}</ul></nav>'
        '<form class="site-search" action="/search"><input name="q" placeholder="Search"><button>Search</button></form>'
        '<a class="signin" href="/account">Sign in</a></header>'
    )


def _ad(text: str, kind: str) -> str:
    return (
        f'<div class="ad-slot {kind}" data-ad-unit="{kind}" aria-label="Advertisement">'
        f'<span class="ad-label">Advertisement</span><a href="https://ads.example.net/click?u={kind}" rel="sponsored">'
        f'<img src="/ads/{kind}.png" alt="{escape(text, quote=True)}"></a></div>'
    )


def _article(page: Page, inline_ad: str) -> str:
    header = [f"<h1>{escape(page.title)}</h1>"]
    meta = []
    if page.byline:
        meta.append(f'By <span class="author">{escape(page.byline)}</span>')
    if page.date:
        meta.append(f'<time datetime="{page.date}">{_human_date(page.date)}</time>')
    if meta:
        header.append(f'<p class="byline">{" · ".join(meta)}</p>')
    paragraphs = [f"<p>{escape(p)}</p>" for p in page.body]
    if len(paragraphs) > 2:
        paragraphs.insert(2, _ad(inline_ad, "ad-inline"))
    body = "\n".join([*paragraphs, _facts(page)])
    return (
        f'<article class="article {escape(page.template)}">\n<header>{"".join(header)}</header>\n'
        f'<div class="article-body">\n{body}\n</div>\n</article>\n'
        '<div class="share-tools"><a href="/share/facebook">Share on Facebook</a> <a href="/share/x">Share on X</a></div>'
    )


def _facts(page: Page) -> str:
    if not page.facts:
        return ""
    if page.template == "table":
        rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in page.facts)
        return f'<table class="data-table"><thead><tr><th>Item</th><th>Value</th></tr></thead><tbody>{rows}</tbody></table>'
    if page.template == "listing":
        items = "".join(f"<li>{escape(k)} – {escape(v)}</li>" for k, v in page.facts)
        return f'<ul class="listing">{items}</ul>'
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in page.facts)
    return f'<table class="record">{rows}</table>'


def _aside(most_read: list[str], ad: str) -> str:
    items = "".join(f'<li><a href="/story/{i}">{escape(title)}</a></li>' for i, title in enumerate(most_read))
    return f'<aside class="related" aria-label="Most read"><h2>Most read</h2><ol>{items}</ol>{_ad(ad, "ad-sidebar")}</aside>'


def _newsletter(site: str) -> str:
    return (
        '<section class="newsletter-signup"><h3>Get our morning briefing</h3>'
        f"<p>The day's essential stories from {escape(site)}, in your inbox every morning.</p>"
        '<form><input type="email" placeholder="Email address"><button>Sign up</button></form></section>'
    )


def _footer(site: str) -> str:
    links = "".join(f'<li><a href="/{text.lower().replace(" ", "-")}">{text}</a></li>' for text in FOOTER_LINKS)
    return (
        f'<footer class="site-footer"><ul class="footer-links">{links}</ul>'
        f"<p class=\"copyright\">© 2025 {escape(site)}. All rights reserved. "
        "We are not responsible for the content of external sites.</p></footer>"
    )


def _human_date(date: str) -> str:
    try:
        return dt.date.fromisoformat(date).strftime("%-d %B %Y")
    except ValueError:
        return date
