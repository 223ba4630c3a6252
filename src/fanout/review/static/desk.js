// The review desk's script: the list, one edit in full, decisions and undo by key or button.
// Every value from the run is put in the page as text (textContent), never as HTML; links are made only
// for http(s) URLs. It talks to the desk's own JSON API only, naming its page (the token the desk gave it),
// and decides only the edit drawn on screen: a held key repeats nothing, and the desk refuses a decision
// for an edit this page did not show. The list is polled, so edits a running `fanout watch` adds appear.
(function () {
  "use strict";
  var POLL_MS = 5000;
  var token = document.body.dataset.page;
  var list = document.getElementById("edits");
  var detail = document.getElementById("detail");
  var empty = document.getElementById("empty");
  var finished = document.getElementById("finished");
  var controls = { show: "todo", stance: "any", models: "any", group: "none" };
  var rows = [], byRcid = {}, known = null, lastText = "", counts = null;
  var current = null;   // the rcid selected in the list
  var shown = null;     // the rcid whose detail is drawn on screen: the only one a key or button decides
  var made = [];        // decisions this page made, newest last: {rcid, time, decision, label}
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
  function short(model) { var parts = String(model).split("/"); return parts[parts.length - 1]; }
  function label(row) { return row.item ? row.item + " (" + row.qid + ")" : row.qid; }
  function getJSON(url, options) {
    return fetch(url, options || { headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, status: r.status, body: body }; }); });
  }
  function post(url, body) {
    return getJSON(url, { method: "POST", body: JSON.stringify(body),
                          headers: { "Content-Type": "application/json", "Accept": "application/json" } });
  }
  var said = { text: "", error: false };  // the last word, kept across the edits drawn after it
  function status(text, error) {
    said = { text: text, error: Boolean(error) };
    var s = document.getElementById("status");
    if (s) { s.textContent = text; s.className = error ? "error" : ""; }
  }

  // --- filters, kept for the tab (the transcript's back link returns to the same view) ---------------------
  function remember() { try { sessionStorage.setItem("desk-controls", JSON.stringify(controls)); } catch (e) { /* off */ } }
  function recall() {
    try { var saved = JSON.parse(sessionStorage.getItem("desk-controls") || "{}");
          Object.keys(controls).forEach(function (k) { if (typeof saved[k] === "string") { controls[k] = saved[k]; } });
    } catch (e) { /* storage off: defaults */ }
    Object.keys(controls).forEach(function (k) { document.getElementById(k).value = controls[k]; });
  }
  function visible(row) {
    var c = controls;
    if (c.show === "todo" && row.human) { return false; }
    if (c.show === "queue" && row.outcome !== "paused") { return false; }
    if (c.show === "decided" && !row.human) { return false; }
    if (c.stance !== "any" && (c.stance === "none" ? row.stance !== null : row.stance !== c.stance)) { return false; }
    if (c.models === "split" && !row.split) { return false; }
    if (c.models === "agree" && row.split) { return false; }
    return true;
  }

  // --- the list ------------------------------------------------------------------------------------------
  function editorKey(row) { return row.editor && row.editor.name !== null ? row.editor.name : "(editor hidden)"; }
  function editorBits(editor) {
    var bits = [];
    if (!editor) { return bits; }
    if (editor.anonymous) { bits.push("anonymous"); }
    if (editor.new) { bits.push("new editor"); }
    if (editor.edit_count !== null && editor.edit_count !== undefined) { bits.push(editor.edit_count + " edits"); }
    return bits;
  }
  function item(row, fresh) {
    var li = el("li", null, fresh ? "new" : "");
    li.id = "edit-" + row.rcid;
    li.dataset.rcid = row.rcid;
    li.dataset.outcome = row.outcome;
    li.dataset.stance = row.stance || "none";
    li.dataset.decision = row.human ? row.human.decision : "";
    li.tabIndex = -1;
    var top = el("div", null, "top");
    top.append(el("span", row.stance_text, "stance st-" + (row.outcome === "paused" ? "paused" : row.stance || "none")));
    if (row.drawn === "random") { top.append(el("span", "random draw", "tag random")); }
    if (row.split) { top.append(el("span", "models split", "tag split")); }
    top.append(el("span", row.human ? row.human.decision : "", "decision"));
    li.append(top);
    var head = el("div");
    head.append(el("b", row.item || row.qid), " ", el("span", row.what || "", "muted"));
    li.append(head, el("div", row.change, "change"));
    var who = [editorKey(row)].concat(editorBits(row.editor));
    li.append(el("div", who.join(" · "), "who muted"));
    return li;
  }
  function groupHead(name, members) {
    var first = members[0];
    var li = el("li", null, "group");
    li.setAttribute("role", "presentation");
    var todo = members.filter(function (r) { return !r.human; }).length;
    li.append(el("b", name), " ", el("span", [members.length + (members.length === 1 ? " edit" : " edits"),
      todo + " to decide"].concat(editorBits(first.editor)).join(" · "), "muted"));
    return li;
  }
  function renderList() {
    var shownRows = rows.filter(visible);
    var fresh = known === null ? {} : rows.reduce(function (acc, r) { if (!known[r.rcid]) { acc[r.rcid] = true; } return acc; }, {});
    known = rows.reduce(function (acc, r) { acc[r.rcid] = true; return acc; }, {});
    var parts = [];
    if (controls.group === "editor") {
      var order = [], groups = {};
      shownRows.forEach(function (r) { var k = editorKey(r); if (!groups[k]) { groups[k] = []; order.push(k); } groups[k].push(r); });
      order.forEach(function (k) { parts.push(groupHead(k, groups[k])); groups[k].forEach(function (r) { parts.push(item(r, fresh[r.rcid])); }); });
    } else {
      shownRows.forEach(function (r) { parts.push(item(r, fresh[r.rcid])); });
    }
    list.replaceChildren.apply(list, parts);
    empty.hidden = shownRows.length > 0;
    var li = current === null ? null : document.getElementById("edit-" + current);
    if (li) { li.classList.add("current"); }
    renderFinished();
  }
  function listed() {
    return Array.prototype.map.call(list.querySelectorAll("li[data-rcid]"), function (li) { return Number(li.dataset.rcid); });
  }

  // --- the header: counts, progress toward a certificate, each model against the people ---------------------
  function waitingText(c) {
    var head = c.waiting ? c.waiting + " of " + c.edits + " edits wait for a human" : "no edit waits for a human";
    var done = c.paused - c.waiting;
    if (done) { head += c.waiting ? " (" + c.paused + " paused, " + done + " of them decided by a human)"
                                  : " (" + c.paused + " paused, all decided by a human)"; }
    return head + " · " + c.decided + " of " + c.edits + " decided by people, " + c.random_sample +
      " of them the random sample";
  }
  function renderHeader(data) {
    document.getElementById("counts").textContent = waitingText(data.counts);
    document.getElementById("progress").textContent = data.progress.map(function (p) { return p.text; }).join(" · ");
    var body = document.querySelector("#kappas tbody");
    body.replaceChildren.apply(body, data.agreement.map(function (k) {
      var tr = el("tr");
      tr.append(el("td", short(k.model)), el("td", ratio(k.kappa)), el("td", k.agree + "/" + k.n), el("td", k.n));
      return tr;
    }));
    var banner = document.getElementById("simulated");
    if (banner) { banner.hidden = !data.simulated; }
  }
  function renderFinished() {
    if (!counts) { return; }
    var left = rows.filter(function (r) { return !r.human; }).length;
    var text = "";
    if (counts.paused > 0 && counts.waiting === 0) {
      text = "Queue finished: all " + counts.paused + " paused edits are decided. " +
        (left ? "The list goes on with random draws and the least sure of the rest: random decisions are what " +
                "certify auto-decisions (" + document.getElementById("progress").textContent + ")."
              : "Every edit of the run is decided.");
    } else if (counts.edits > 0 && left === 0) {
      text = "Every edit of the run is decided.";
    }
    finished.textContent = text;
    finished.hidden = !text;
    document.body.dataset.finished = text ? "1" : "0";
  }

  function load() {
    return getJSON("/api/edits?page=" + encodeURIComponent(token)).then(function (res) {
      if (!res.ok) { status(res.body.error, true); return; }
      var text = JSON.stringify(res.body);
      if (text === lastText) { return; }
      lastText = text;
      rows = res.body.edits;
      counts = res.body.counts;
      byRcid = rows.reduce(function (acc, r) { acc[r.rcid] = r; return acc; }, {});
      renderHeader(res.body);
      renderList();
      document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
    });
  }
  function poll() {
    var again = function () { setTimeout(poll, POLL_MS); };
    if (document.hidden || busy) { again(); return; }
    load().then(again, again);
  }

  // --- one edit in full ----------------------------------------------------------------------------------
  function select(rcid, open) {
    var before = current === null ? null : document.getElementById("edit-" + current);
    if (before) { before.classList.remove("current"); }
    current = rcid;
    shown = null;
    if (rcid === null) { detail.replaceChildren(el("p", "No edit to show.", "muted")); return; }
    var li = document.getElementById("edit-" + rcid);
    if (li) { li.classList.add("current"); li.scrollIntoView({ block: "nearest" }); }
    if (open) { document.body.classList.add("reading"); }
    if (window.location.hash !== "#edit-" + rcid) { history.replaceState(null, "", "#edit-" + rcid); }
    getJSON("/api/edits/" + encodeURIComponent(rcid) + "?page=" + encodeURIComponent(token)).then(function (res) {
      if (current !== rcid) { return; }
      if (!res.ok) { detail.replaceChildren(el("p", res.body.error, "error")); return; }
      render(res.body);
      shown = rcid;  // drawn on screen: now, and only now, a key or a button decides it
      document.body.dataset.shown = String(rcid);
      document.body.dataset.drawn = String(Number(document.body.dataset.drawn || 0) + 1);
    });
  }
  function row(dl, name, value) {
    dl.appendChild(el("dt", name));
    var dd = el("dd");
    dd.append.apply(dd, Array.isArray(value) ? value : [value]);
    dl.appendChild(dd);
  }
  function links(edit) {
    var found = [];
    // a claim's link is its source (link_text), an edit's its diff on Wikidata
    [[edit.diff_url, edit.link_text || "diff"], [edit.history_url, "item history"], [edit.undo_url, "undo on Wikidata"]]
      .forEach(function (pair) { if (pair[0]) { if (found.length) { found.push(" · "); } found.push(httpLink(pair[0], pair[1])); } });
    return found.length ? found : ["no links"];
  }
  function editorCell(edit) {
    var e = edit.editor;
    if (!e) { return ["not in the snapshot"]; }
    var parts = [];
    if (e.name === null) { parts.push("hidden"); } else {
      parts.push(httpLink("https://www.wikidata.org/wiki/Special:Contributions/" + encodeURIComponent(e.name), e.name));
    }
    editorBits(e).forEach(function (b) { parts.push(" ", el("span", b, "tag")); });
    return parts;
  }
  function historyList(edit) {
    if (!edit.history.length) { return el("span", "not decided yet", "muted"); }
    var ol = el("ol", null, "history");
    var undone = {}, standing = [];  // which decisions an undo took back: the one standing when it came
    edit.history.forEach(function (h, i) {
      if (h.decision !== "undo") { standing.push(i); } else if (standing.length) { undone[standing.pop()] = true; }
    });
    edit.history.forEach(function (h, i) {
      var li = el("li");
      var what = h.decision === "undo" ? "undo" : h.decision;
      li.append(el("span", what, "decision d-" + what), " ", el("time", h.time), " · " + (h.reviewer || "anonymous"));
      if (undone[i]) { li.className = "undone"; li.append(el("span", " · undone", "muted")); }
      if (h.decision === "undo") { li.append(" took back the decision of " + h.undoes); }
      if (h.drawn) { li.append(el("span", " · " + h.drawn, "muted")); }
      if (h.note) { li.append(" “" + h.note + "”"); }
      ol.appendChild(li);
    });
    return ol;
  }
  function drawnText(edit) {
    if (edit.human) { return "decided"; }
    var row = byRcid[edit.rcid];
    if (row && row.drawn === "random") { return "drawn at random: decide it like any other; random draws certify auto-decisions"; }
    if (row && row.drawn === "uncertain") { return "one of the least sure"; }
    return "chosen";
  }
  function render(edit) {
    var form = document.getElementById("decide-template").content.cloneNode(true);
    var dl = el("dl", null, "edit");
    row(dl, "editor", editorCell(edit));
    row(dl, "when", edit.timestamp || "–");
    row(dl, "what", edit.what || "");
    var change = el("span");
    if (edit.old !== null && edit.new !== null) {
      change.append(el("span", edit.old, "old"), " → ", el("span", edit.new, "new"));
    } else { change.textContent = edit.change; }
    row(dl, "change", change);
    row(dl, "on Wikidata", links(edit));
    row(dl, "committee", [el("span", edit.stance_text, "stance st-" + (edit.outcome === "paused" ? "paused" : edit.stance || "none")),
                          " " + (edit.why || "")]);
    row(dl, "confidence", edit.mean_confidence_words + " " + ratio(edit.mean_confidence) + " (what --pause reads; the queue's " +
        "order) · Dawid–Skene posterior " + ratio(edit.dawid_skene_posterior));
    row(dl, "drawn", drawnText(edit));
    var a = el("a", "the full transcripts"); a.href = edit.transcript_url; a.id = "transcript";
    row(dl, "transcript", a);
    row(dl, "decided", historyList(edit));
    var back = el("button", "← edits", "back");
    back.type = "button";
    back.id = "back-to-list";
    var parts = [back, el("h2", label(edit)), form, dl];
    edit.models.forEach(function (m) { parts.push(modelBox(m)); });
    detail.replaceChildren.apply(detail, parts);
    detail.querySelectorAll("button[data-decision]").forEach(function (b) {
      b.addEventListener("click", function () { decide(b.dataset.decision); });
    });
    document.getElementById("undo").addEventListener("click", undoLast);
    document.getElementById("back-to-list").addEventListener("click", function () { document.body.classList.remove("reading"); });
    document.getElementById("undo").disabled = made.length === 0;
    status(said.text, said.error);
    if (edit.human) { document.getElementById("note").value = edit.human.note; }
  }
  function modelBox(m) {
    var box = el("section", null, "model");
    box.appendChild(el("h3", short(m.model) + ": " + (m.verdict || m.status) +
      (m.confidence !== null ? " · " + m.confidence_kind + " " + ratio(m.confidence) : "")));
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
    return box;
  }

  // --- deciding, and taking a decision back ----------------------------------------------------------------
  function following(rcid) {
    var order = listed(), at = order.indexOf(rcid);
    return at < 0 ? order : order.slice(at + 1).concat(order.slice(0, at));
  }
  function afterwards(candidates, stay) {
    // the next undecided edit after the one just decided, else any undecided one in view, else stay on it
    var open = function (r) { return byRcid[r] && visible(byRcid[r]) && !byRcid[r].human; };
    var next = candidates.filter(open)[0];
    if (next === undefined) { next = listed().filter(open)[0]; }
    if (next === undefined) { next = stay !== undefined && listed().indexOf(stay) >= 0 ? stay : listed()[0]; }
    select(next === undefined ? null : next, true);
  }
  function decide(decision) {
    if (busy) { return; }
    if (shown === null || shown !== current) { status("wait for the edit to show before deciding it", true); return; }
    var rcid = shown, note = document.getElementById("note");
    var candidates = following(rcid);
    busy = true;
    status("saving…");
    post("/api/decisions", { rcid: rcid, decision: decision, note: note ? note.value : "", page: token })
      .then(function (res) {
        busy = false;
        if (!res.ok) { status(res.body.error, true); return; }
        shown = null;  // decided: the next decision waits for the next edit to be drawn
        document.body.dataset.shown = "";
        made.push({ rcid: rcid, time: res.body.time, decision: decision, label: byRcid[rcid] ? label(byRcid[rcid]) : rcid });
        document.body.dataset.saved = String(Number(document.body.dataset.saved || 0) + 1);
        return load().then(function () {
          afterwards(candidates, rcid);
          status("saved: " + decision + " on " + made[made.length - 1].label + " · z to undo");
        });
      }, function () { busy = false; status("the desk did not answer; is `fanout review` still running?", true); });
  }
  function undoLast() {
    if (busy || !made.length) { return; }
    var last = made[made.length - 1];
    busy = true;
    post("/api/undo", { rcid: last.rcid, undoes: last.time, page: token }).then(function (res) {
      busy = false;
      if (!res.ok) { status(res.body.error, true); return; }
      made.pop();
      document.body.dataset.undone = String(Number(document.body.dataset.undone || 0) + 1);
      return load().then(function () {
        if (!visible(byRcid[last.rcid])) { setControl("show", "all"); }
        select(last.rcid, true);
        status("undone: " + last.decision + " on " + last.label);
      });
    }, function () { busy = false; status("the desk did not answer; is `fanout review` still running?", true); });
  }

  // --- keys, clicks, controls ------------------------------------------------------------------------------
  function move(step) {
    var order = listed(), at = order.indexOf(current);
    var next = order[Math.max(0, Math.min(order.length - 1, at + step))];
    if (next !== undefined) { select(next, false); }
  }
  function setControl(name, value) {
    controls[name] = value;
    document.getElementById(name).value = value;
    remember();
    renderList();
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var typing = ev.target && (ev.target.tagName === "TEXTAREA" || ev.target.tagName === "SELECT");
    if (typing) { if (ev.key === "Escape") { ev.target.blur(); } return; }
    if (ev.repeat) { ev.preventDefault(); return; }  // a held key acts once: no edit is decided unseen
    var keys = { j: function () { move(1); }, k: function () { move(-1); },
                 a: function () { decide("accept"); }, r: function () { decide("reject"); },
                 u: function () { decide("unsure"); }, z: undoLast,
                 n: function () { var n = document.getElementById("note"); if (n) { n.focus(); } },
                 o: function () { var t = document.getElementById("transcript"); if (t) { window.location = t.href; } } };
    if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
  });
  list.addEventListener("click", function (ev) {
    var li = ev.target.closest("li[data-rcid]");
    if (li) { select(Number(li.dataset.rcid), true); }
  });
  Object.keys(controls).forEach(function (name) {
    document.getElementById(name).addEventListener("change", function (ev) {
      setControl(name, ev.target.value);
      if (current !== null && !document.getElementById("edit-" + current)) { afterwards([]); }
    });
  });

  recall();
  load().then(function () {
    var wanted = /^#edit-(\d+)$/.exec(window.location.hash);
    var rcid = wanted ? Number(wanted[1]) : null;
    if (rcid !== null && byRcid[rcid]) {  // back from a transcript: the edit you were on, in the view you had
      if (!visible(byRcid[rcid])) { setControl("show", "all"); setControl("stance", "any"); setControl("models", "any"); }
      select(rcid, true);
    } else {
      if (!rows.some(visible) && controls.show === "todo") { setControl("show", "all"); }
      select(listed()[0] === undefined ? null : listed()[0], false);
    }
    setTimeout(poll, POLL_MS);
  });
})();
