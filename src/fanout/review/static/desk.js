// The review desk's script: the list, one edit in full, decisions by key or button.
// Every value from the run is put in the page as text (textContent), never as HTML;
// links are made only for http(s) URLs. It talks to the desk's own JSON API only.
(function () {
  "use strict";
  var list = document.getElementById("edits");
  var detail = document.getElementById("detail");
  var show = document.getElementById("show");
  var empty = document.getElementById("empty");
  var items = Array.prototype.slice.call(list.querySelectorAll("li"));
  var current = null;
  var busy = false;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function httpLink(url, text) {
    var safe = /^https?:\/\//i.test(String(url || "").trim());
    var a = el(safe ? "a" : "span", text || url);
    if (safe) { a.href = String(url).trim(); a.rel = "noopener noreferrer nofollow"; a.target = "_blank"; }
    return a;
  }
  function ratio(x) { return x === null || x === undefined ? "–" : Number(x).toFixed(2); }

  function visible(li) {
    var mode = show.value;
    if (mode === "paused") { return li.dataset.outcome === "paused"; }
    if (mode === "undecided") { return !li.dataset.decision; }
    return true;
  }
  function shown() { return items.filter(function (li) { return !li.hidden; }); }
  function applyFilter() {
    items.forEach(function (li) { li.hidden = !visible(li); });
    var left = shown();
    empty.hidden = left.length > 0;
    if (!current || current.hidden) { select(left[0] || null); }
  }
  function move(step) {
    var left = shown();
    var at = left.indexOf(current);
    var next = left[Math.max(0, Math.min(left.length - 1, at + step))];
    if (next) { select(next); }
  }

  function select(li) {
    if (current) { current.classList.remove("current"); }
    current = li;
    if (!li) { detail.replaceChildren(el("p", "No edit to show.", "muted")); return; }
    li.classList.add("current");
    li.scrollIntoView({ block: "nearest" });
    var rcid = li.dataset.rcid;
    fetch("/api/edits/" + encodeURIComponent(rcid), { headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .then(function (res) {
        if (current !== li) { return; }
        if (!res.ok) { detail.replaceChildren(el("p", res.body.error, "error")); return; }
        render(res.body);
      });
  }

  function render(edit) {
    var parts = [];
    var title = el("h2", edit.item ? edit.item + " (" + edit.qid + ")" : edit.qid);
    parts.push(title);
    var form = document.getElementById("decide-template").content.cloneNode(true);
    parts.push(form);
    var dl = el("dl", null, "edit");
    function row(name, value) { dl.appendChild(el("dt", name)); var dd = el("dd"); dd.appendChild(value); dl.appendChild(dd); }
    row("rcid", document.createTextNode(edit.rcid));
    row("what", document.createTextNode(edit.what || ""));
    var change = el("span");
    if (edit.old !== null && edit.new !== null) {
      change.append(el("span", edit.old, "old"), " → ", el("span", edit.new, "new"));
    } else { change.textContent = edit.change; }
    row("change", change);
    var linked = edit.link_text && edit.link_text !== "diff";  // a claim's source, not a Wikidata diff
    row(linked ? edit.link_text : "diff", edit.diff_url ? httpLink(edit.diff_url, linked ? "open the " + edit.link_text
        : "open the diff on Wikidata") : document.createTextNode(linked ? "no link" : "no diff link"));
    row("committee", document.createTextNode(edit.outcome + (edit.why ? ": " + edit.why : "") +
        " · majority " + (edit.majority || "none") + " · Dawid–Skene " + (edit.dawid_skene || "none") +
        " · mean confidence " + ratio(edit.mean_confidence)));
    var a = el("a", "the full transcripts"); a.href = edit.transcript_url; a.id = "transcript";
    row("transcript", a);
    var history = el("span", null, "history");
    if (edit.history.length === 0) { history.textContent = "not decided yet"; }
    edit.history.forEach(function (h, i) {
      if (i) { history.append(" ← "); }
      history.append(el("span", h.decision, "decision d-" + h.decision),
        " " + (h.reviewer || "anonymous") + " " + h.time + (h.note ? " “" + h.note + "”" : ""));
    });
    row("decided", history);
    parts.push(dl);
    edit.models.forEach(function (m) {
      var box = el("section", null, "model");
      box.appendChild(el("h3", m.model + ": " + (m.verdict || m.status) +
        (m.confidence !== null ? " · confidence " + ratio(m.confidence) : "")));
      if (m.rationale) { box.appendChild(el("p", m.rationale)); }
      if (m.error) { box.appendChild(el("p", "error: " + m.error, "muted")); }
      if (m.sources.length) {
        var ul = el("ul");
        m.sources.forEach(function (s) {
          var li = el("li"); li.appendChild(httpLink(s.url));
          li.append(" · " + s.provenance + (s.supports_claim ? " · supports" : " · does not support"));
          ul.appendChild(li);
        });
        box.appendChild(ul);
      }
      parts.push(box);
    });
    detail.replaceChildren.apply(detail, parts);
    detail.querySelectorAll("button[data-decision]").forEach(function (b) {
      b.addEventListener("click", function () { decide(b.dataset.decision); });
    });
    if (edit.human) { document.getElementById("note").value = edit.human.note; }
  }

  function updateCounts() {
    var paused = items.filter(function (li) { return li.dataset.outcome === "paused"; });
    var decided = function (li) { return Boolean(li.dataset.decision); };
    document.getElementById("counts").textContent = paused.length + " paused for a human (" +
      paused.filter(decided).length + " decided) · " + items.length + " edits · " +
      items.filter(decided).length + " decided in all";
  }

  function status(text, error) {
    var s = document.getElementById("status");
    if (s) { s.textContent = text; s.className = error ? "error" : ""; }
  }

  function decide(decision) {
    if (!current || busy) { return; }
    var li = current;
    var note = document.getElementById("note");
    busy = true;
    status("saving…");
    fetch("/api/decisions", {
      method: "POST", headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify({ rcid: Number(li.dataset.rcid), decision: decision, note: note ? note.value : "" })
    }).then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .then(function (res) {
        busy = false;
        if (!res.ok) { status(res.body.error, true); return; }
        li.dataset.decision = res.body.decision;
        li.querySelector(".decision").textContent = res.body.decision;
        updateCounts();
        document.body.dataset.saved = String(Number(document.body.dataset.saved || 0) + 1);
        var left = shown(); var at = left.indexOf(li);
        if (!visible(li)) { li.hidden = true; }
        var next = left[at + 1];
        if (next) { select(next); } else { select(li.hidden ? shown()[0] || null : li); }
      }, function () { busy = false; status("the desk did not answer; is `fanout review` still running?", true); });
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var typing = ev.target && (ev.target.tagName === "TEXTAREA" || ev.target.tagName === "SELECT");
    if (typing) { if (ev.key === "Escape") { ev.target.blur(); } return; }
    var keys = { j: function () { move(1); }, k: function () { move(-1); },
                 a: function () { decide("accept"); }, r: function () { decide("reject"); },
                 u: function () { decide("unsure"); },
                 n: function () { var n = document.getElementById("note"); if (n) { n.focus(); } },
                 o: function () { var t = document.getElementById("transcript"); if (t) { window.location = t.href; } } };
    if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
  });
  list.addEventListener("click", function (ev) {
    var li = ev.target.closest("li");
    if (li) { select(li); }
  });
  show.addEventListener("change", function () { applyFilter(); });
  if (!items.some(function (li) { return li.dataset.outcome === "paused"; })) { show.value = "all"; }
  applyFilter();
})();
