// The search page of agentic-search: the query and its options live in the URL (shareable;
// opened directly it searches; the back button works), POST /search answers, this renders.
// A conversation lives there too: each earlier turn is a pair of parameters, hq (its query)
// and hi (the ids it showed, comma-separated), oldest first; the "refine" box under the
// results adds the current query as a turn and asks the next one against it.
// Catalog text is data: every string from the server is written with textContent, never as
// markup (the server's Content-Security-Policy forbids inline script as a second guard).
"use strict";

(function () {
  const OPS = { eq: "=", ne: "≠", lt: "<", lte: "≤", gt: ">", gte: "≥", in: "in", nin: "not in", contains: "contains" };
  const $ = (id) => document.getElementById(id);
  const MAX_TURNS = 10, MAX_IDS = 50;  // the API's bounds of history
  let domains = [];
  let lastResponse = null;
  let seq = 0;

  // ---- tiny DOM helpers: text only ------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = String(v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  function clear(node) { node.replaceChildren(); return node; }
  function show(node, yes) { node.hidden = !yes; }
  function fmt(v) {
    if (Array.isArray(v)) return v.map(fmt).join(", ");
    if (v === null || v === undefined) return "—";
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(+v.toFixed(3));
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }
  // the whole search (cache check to answer), else the executor's part of it
  function searchMs(stats) {
    const total = (stats.stageMs || {}).pipeline_total;
    return total !== undefined ? total : stats.latencyMs;
  }
  function when(iso) {
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }
  function ms(v) { return v === undefined || v === null ? "—" : `${(+v).toFixed(v < 10 ? 1 : 0)} ms`; }

  // ---- the URL is the state -------------------------------------------------------------
  function readUrl() {
    const p = new URLSearchParams(location.search);
    return {
      q: p.get("q") || "",
      domain: p.get("domain") || "",
      limit: p.get("limit") || "",
      rounds: p.get("rounds") || "",
      drop: p.getAll("drop"),
      history: turnsOf(p),
    };
  }
  function turnsOf(p) {
    const qs = p.getAll("hq"), ids = p.getAll("hi");
    return qs.slice(0, MAX_TURNS).map((q, i) => ({ query: q, ids: (ids[i] || "").split(",").filter(Boolean).slice(0, MAX_IDS) }));
  }
  function writeUrl(s, replace) {
    const p = new URLSearchParams();
    if (s.q) p.set("q", s.q);
    if (s.domain) p.set("domain", s.domain);
    if (s.limit) p.set("limit", s.limit);
    if (s.rounds) p.set("rounds", s.rounds);
    for (const d of s.drop || []) p.append("drop", d);
    for (const t of s.history || []) { p.append("hq", t.query); p.append("hi", t.ids.join(",")); }
    const url = `${location.pathname}?${p.toString()}`;
    if (replace) history.replaceState(null, "", url);
    else history.pushState(null, "", url);
  }
  function formState() {
    return {
      q: $("q").value.trim(),
      domain: $("domain").value,
      limit: $("limit").value,
      rounds: $("rounds").value,
      drop: [],
      history: [],
    };
  }
  function fillForm(s) {
    $("q").value = s.q;
    if (s.domain && [...$("domain").options].some((o) => o.value === s.domain)) $("domain").value = s.domain;
    $("limit").value = s.limit || "10";
    $("rounds").value = s.rounds || "";
  }

  // ---- server calls -----------------------------------------------------------------------
  async function getJson(url, init) {
    const resp = await fetch(url, Object.assign({ headers: { "content-type": "application/json" } }, init));
    let body = null;
    try { body = await resp.json(); } catch (e) { body = { error: "InvalidResponse", message: `HTTP ${resp.status}` }; }
    return { status: resp.status, body };
  }

  async function loadDomains() {
    try {
      const { status, body } = await getJson("domains");
      domains = status === 200 ? body.domains : [{ name: "tools", temporalField: null }];
    } catch (e) {
      domains = [{ name: "tools", temporalField: null }];
    }
    const sel = clear($("domain"));
    for (const d of domains) sel.append(el("option", { value: d.name, text: d.name }));
  }

  async function loadStatus(domain, response) {
    const out = clear($("catalog-status"));
    out.append(el("span", { text: `Domain ${domain}` }));
    const cache = response && response.cache;
    if (cache && cache.backend !== "none" && cache.catalogVersion !== null && cache.catalogVersion !== undefined) {
      out.append(" · ", el("span", { id: "catalog-version", text: `catalog version ${cache.catalogVersion}` }));
    } else if (response) {
      out.append(" · ", el("span", { id: "catalog-version", text: "catalog version: not tracked (no result cache)" }));
    }
    try {
      const { status, body } = await getJson(`sync/status?domain=${encodeURIComponent(domain)}`);
      if (status === 200) {
        const counts = Object.entries(body.counts || {}).map(([k, v]) => `${v} ${k}`).join(", ") || "no sync entries";
        out.append(" · ", el("span", { id: "sync-status", class: body.healthy ? "ok" : "bad",
          text: `sync ${body.healthy ? "healthy" : "needs attention"} (${counts})` }));
      } else {
        out.append(" · ", el("span", { id: "sync-status", text: `sync status unavailable (${body.message || status})` }));
      }
    } catch (e) {
      out.append(" · ", el("span", { id: "sync-status", text: "sync status unavailable" }));
    }
  }

  // ---- search ---------------------------------------------------------------------------------
  async function run(s) {
    const mine = ++seq;
    fillForm(s);
    if (!s.q) { document.body.dataset.state = "idle"; return; }
    document.body.dataset.state = "loading";
    $("message").textContent = `Searching for “${s.q}”…`;
    $("go").disabled = true;
    performance.mark("as:search-start");
    const payload = { query: s.q, domain: s.domain || (domains[0] && domains[0].name) || "tools" };
    const limit = parseInt(s.limit, 10);
    if (limit) payload.limit = limit;
    const rounds = parseInt(s.rounds, 10);
    if (rounds) payload.rounds = rounds;
    if (s.drop.length) payload.drop = s.drop;
    if ((s.history || []).length) payload.history = s.history;
    renderConversation(s);
    let result;
    try {
      result = await getJson("search", { method: "POST", body: JSON.stringify(payload) });
    } catch (e) {
      result = { status: 0, body: { error: "NetworkError", message: String(e) } };
    }
    if (mine !== seq) return; // a newer search started meanwhile
    $("go").disabled = false;
    if (result.status !== 200) {
      renderError(result);
      document.body.dataset.state = "error";
      return;
    }
    lastResponse = result.body;
    render(result.body, s);
    performance.mark("as:search-rendered");
    performance.measure("as:search", "as:search-start", "as:search-rendered");
    if (!performance.getEntriesByName("as:first-render").length) performance.mark("as:first-render");
    document.body.dataset.state = "done";
    loadStatus(payload.domain, result.body);
  }

  function renderError(result) {
    for (const id of ["intent", "verdict", "comparison", "results", "refine", "source-errors", "rounds-panel"]) show($(id), false);
    const b = result.body || {};
    const fields = (b.detail || []).map((d) => `${d.field}: ${d.message}`).join("; ");
    $("message").textContent = `The search failed (${result.status} ${b.error || ""}): ${b.message || ""}${fields ? ` — ${fields}` : ""}`;
    $("raw").textContent = JSON.stringify(b, null, 2);
    show($("raw-panel"), true);
  }

  function render(r, s) {
    const cands = r.candidates || [];
    const cache = r.cache || {};
    const took = cache.hit
      ? `from the result cache (computed ${cache.computedAt ? when(cache.computedAt) : "earlier"}, looked up in ${ms(cache.lookupMs)})`
      : `in ${ms(searchMs(r.executionStats || {}))}`;
    $("message").textContent = `${cands.length} result${cands.length === 1 ? "" : "s"} for “${r.query}” ${took}`;
    renderIntent(r, s);
    renderFollowUp(r.intent || {});
    renderVerdict(r);
    renderComparison(r.comparison);
    renderCards(r);
    renderErrors(r.errors || []);
    renderRounds(r);
    $("raw").textContent = JSON.stringify(r, null, 2);
    show($("raw-panel"), true);
  }

  // ---- intent chips ----------------------------------------------------------------------------
  function chipsOf(intent, temporalField) {
    const groups = { hard: [], temporal: [], soft: [], entities: [] };
    for (const f of intent.constraints || []) {
      const chip = {
        id: `filter:${f.field}:${f.operator}`,
        label: `${f.field} ${OPS[f.operator] || f.operator} ${fmt(f.value)}`,
        title: f.origin ? `from “${f.origin}”` : "",
      };
      (f.field === temporalField ? groups.temporal : groups.hard).push(chip);
    }
    for (const [vocab, values] of Object.entries(intent.matches || {})) {
      for (const v of values) groups.soft.push({ id: `prefer:${vocab}=${v}`, label: `${vocab}: ${v}`, title: "soft preference" });
    }
    const seen = new Set();
    if (intent.referenceTool) {
      seen.add(intent.referenceTool);
      groups.entities.push({ id: `entity:${intent.referenceTool}`, label: `like ${intent.referenceToolName || intent.referenceTool}`, title: `reference record ${intent.referenceTool}` });
    }
    for (const e of intent.entities || []) {
      if (e.kind !== "entity" || seen.has(e.id)) continue;
      seen.add(e.id);
      groups.entities.push({ id: `entity:${e.id}`, label: e.name, title: `linked from “${e.surface}” (${e.method} ${(+e.score).toFixed(2)})` });
    }
    for (const t of intent.excludedTools || []) groups.entities.push({ id: `exclude:${t}`, label: `not ${t}`, title: "excluded record" });
    return groups;
  }

  const GROUP_NAMES = { hard: "Hard filters", temporal: "Time range", soft: "Soft preferences", entities: "Reference entities" };

  function renderIntent(r, s) {
    const intent = r.intent || {};
    const domain = domains.find((d) => d.name === r.domain) || {};
    const groups = chipsOf(intent, domain.temporalField);
    const box = clear($("chip-groups"));
    let any = false;
    for (const [key, chips] of Object.entries(groups)) {
      if (!chips.length) continue;
      any = true;
      const list = el("ul", { class: `chips ${key}`, "aria-label": GROUP_NAMES[key] });
      for (const c of chips) {
        list.append(el("li", { class: "chip", "data-chip": c.id, title: c.title || null },
          el("span", { class: "chip-label", text: c.label }),
          el("button", { type: "button", class: "chip-remove", "aria-label": `Remove ${GROUP_NAMES[key].toLowerCase()} “${c.label}” and search again`,
            onclick: () => rerun(s, [...s.drop, c.id]) }, "×")));
      }
      box.append(el("div", { class: "chip-group" }, el("h3", { text: GROUP_NAMES[key] }), list));
    }
    if (!any) box.append(el("p", { class: "muted", text: "No filters, preferences or entities: a plain text search." }));
    const goal = intent.primaryGoal ? `goal: ${intent.primaryGoal}` : "";
    const ext = r.extractor ? `read by ${r.extractor.path} (${r.extractor.reason})` : "";
    $("intent-summary").textContent = [goal, intent.complexity ? `complexity: ${intent.complexity}` : "", ext].filter(Boolean).join(" · ");
    const removed = clear($("removed-list"));
    for (const id of s.drop) {
      removed.append(el("li", { class: "chip removed", "data-dropped": id },
        el("span", { class: "chip-label", text: id }),
        el("button", { type: "button", class: "chip-restore", "aria-label": `restore “${id}” and search again`,
          onclick: () => rerun(s, s.drop.filter((d) => d !== id)) }, "restore")));
    }
    show($("removed"), s.drop.length > 0);
    show($("intent"), true);
  }

  // ---- the conversation: earlier turns, how this one was read, the refine box ---------------
  function renderConversation(s) {
    const turns = s.history || [];
    const list = clear($("turns"));
    turns.forEach((t, i) => list.append(el("li", { "data-turn": i + 1 },
      el("span", { class: "turn-q", text: t.query }),
      el("span", { class: "muted", text: ` (${t.ids.length} shown)` }))));
    show($("conversation"), turns.length > 0);
  }

  function renderFollowUp(intent) {
    const up = intent.followUp;
    const box = $("follow-up");
    if (!up) { show(box, false); return; }
    $("follow-up-head").textContent = up.kind === "standalone"
      ? "Read as a new search: the query stands alone, so the conversation's context was dropped."
      : `Read as a follow-up (${up.kind}) of turn ${up.turn}${up.cue ? `, from “${up.cue}”` : ""}: searched as “${up.readAs}”.`;
    const dl = clear($("follow-up-parts"));
    for (const [label, parts] of [["Kept", up.kept], ["Added", up.added], ["Dropped", up.dropped]]) {
      if (!(parts || []).length) continue;
      dl.append(el("dt", { text: label }), el("dd", { text: parts.join("; ") }));
    }
    if ((up.within || []).length) dl.append(el("dt", { text: "Searched first within" }), el("dd", { text: up.within.join(", ") }));
    show(box, true);
  }

  function refine(text) {
    const s = readUrl();
    if (!text || !s.q) return;
    const ids = ((lastResponse || {}).candidates || []).map((c) => c.id).slice(0, MAX_IDS);
    const history = [...(s.history || []), { query: s.q, ids }].slice(-MAX_TURNS);
    const next = Object.assign({}, s, { q: text, drop: [], history });
    writeUrl(next, false);
    $("refine-q").value = "";
    run(next);
  }

  function startOver() {
    const s = Object.assign({}, readUrl(), { history: [], drop: [] });
    writeUrl(s, false);
    run(s);
  }

  function rerun(s, drop) {
    const next = Object.assign({}, s, { drop });
    writeUrl(next, false);
    run(next);
  }

  // ---- verdict ---------------------------------------------------------------------------------
  function renderVerdict(r) {
    const q = r.answerQuality;
    const m = q && /best match ([\d.]+) (>=|<) ([\d.]+)/.exec(q.reason || "");
    const threshold = m ? parseFloat(m[3]) : null;
    if (!q || q.verdict === "good") { show($("verdict"), false); return threshold; }
    const box = $("verdict");
    box.className = `verdict ${q.verdict}`;
    if (q.verdict === "none") {
      $("verdict-h").textContent = "No good match";
      const parts = [];
      if (m) parts.push(`The best result scored ${m[1]}, below the relevance threshold of ${m[3]} for this domain.`);
      parts.push(`Reason: ${q.reason}.`);
      if (q.withheld) parts.push(`${q.withheld} weak result${q.withheld === 1 ? " was" : "s were"} held back.`);
      $("verdict-reason").textContent = parts.join(" ");
    } else {
      $("verdict-h").textContent = "Weak match";
      const n = (r.candidates || []).length;
      const fit = Array.isArray(q.supported) ? q.supported.length : n;
      $("verdict-reason").textContent = (fit < n
        ? `Only ${fit} of the ${n} results show they fit your query; the others are folded under “${n - fit} weaker result${n - fit === 1 ? "" : "s"}”.`
        : "These results only partly fit your query.") + ` (${q.reason})`;
    }
    show(box, true);
    return threshold;
  }

  // ---- comparison ------------------------------------------------------------------------------
  function renderComparison(cmp) {
    const table = clear($("comparison-table"));
    if (!cmp || !(cmp.records || []).length) { show($("comparison"), false); return; }
    table.append(el("caption", { text: `${cmp.records.map((x) => x.name).join(" vs ")} (fields marked ≠ differ)` }));
    table.append(el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "field" }),
      cmp.records.map((rec) => el("th", { scope: "col", text: rec.name })))));
    const body = el("tbody");
    const fields = cmp.fields && cmp.fields.length ? cmp.fields : Object.keys(cmp.records[0].values || {});
    for (const f of fields) {
      const cells = cmp.records.map((rec) => fmt((rec.values || {})[f]));
      const differs = new Set(cells).size > 1;
      body.append(el("tr", { class: differs ? "differs" : "same", title: differs ? "the values differ" : "the same for all" },
        el("th", { scope: "row", text: f }),
        cells.map((text) => el("td", { text }))));
    }
    table.append(body);
    show($("comparison"), true);
  }

  // ---- result cards ----------------------------------------------------------------------------
  // A card says in plain words why it fits (the asked values the record holds, the query's own
  // words, the reference it is like); aspects, filters and per-source scores are developer
  // details, behind a disclosure.
  function plainField(f) { return String(f).replace(/_/g, " "); }

  function matchedOf(c, r) {
    const prov = c.provenance || {};
    const hits = prov.hits || [];
    const intent = r.intent || {};
    const names = new Map((intent.entities || []).filter((e) => e.kind === "entity").map((e) => [e.id, e.name]));
    const lines = [];
    const links = [];
    const named = hits.filter((h) => h.source.startsWith("entity:"));
    if (named.length) links.push("named in your query");
    for (const h of hits) {
      const g = h.source.split(":");
      if (g[0] === "graph" && g.length === 3) links.push(`linked from ${names.get(g[2]) || g[2]} (${plainField(g[1])})`);
    }
    const values = [];
    for (const [field, vals] of Object.entries(prov.matchedValues || {})) {
      for (const v of vals) values.push(el("span", { class: "val", "data-field": field, text: `${fmt(v)} (${plainField(field)})` }));
    }
    const words = (prov.matchedKeywords || []).slice(0, 8).map((w) => el("span", { class: "kw", text: w }));
    const ref = intent.referenceTool;
    const like = ref ? names.get(ref) || intent.referenceToolName || ref : null;
    const isLike = like && hits.some((h) => h.queryVectorSource === "reference_tool");
    const items = [];
    const join = (nodes) => nodes.flatMap((n, i) => (i ? [", ", n] : [n]));
    if (values.length) items.push(join(values));
    if (words.length) items.push(["your words ", ...join(words)]);
    if (items.length) lines.push(["Matched: ", ...items.flatMap((x, i) => (i ? ["; ", ...x] : x))]);
    if (isLike) lines.push([`Like ${like}`]);
    if (links.length) lines.push([[...new Set(links)].join("; ").replace(/^./, (x) => x.toUpperCase())]);
    return lines;
  }

  function devRows(c) {
    const prov = c.provenance || {};
    const hits = prov.hits || [];
    const rows = [];
    const aspects = [];
    for (const h of hits) {
      if (!h.aspect) continue;
      const label = h.aspect + (h.queryVectorSource === "reference_tool" ? " (like the reference)" : "");
      if (!aspects.includes(label)) aspects.push(label);
    }
    if (aspects.length) rows.push(["Matched aspects", aspects.join(", ")]);
    if ((prov.matchedTerms || []).length) rows.push(["Matched terms", prov.matchedTerms.join(", ")]);
    if ((prov.filtersApplied || []).length) rows.push(["Filters", prov.filtersApplied.join("; ")]);
    if ((prov.relaxedFilters || []).length) rows.push(["Relaxed", prov.relaxedFilters.join("; ")]);
    rows.push(["Fused score", `${fmt(c.fusedScore)} (rank score ${fmt(c.score)}, min-max of this list)`]);
    if (c.rerankScore !== undefined && c.rerankScore !== null) rows.push(["Rerank score", fmt(c.rerankScore)]);
    return rows;
  }

  // The record's description, the query's matched words marked (DOM nodes: never markup).
  function highlighted(text, terms) {
    const stems = [...new Set(terms.filter((t) => t && t.length > 1).map((t) => t.toLowerCase()))];
    const out = [];
    if (!stems.length) return [text];
    const esc = stems.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).sort((a, b) => b.length - a.length);
    const re = new RegExp(`\\b(?:${esc.join("|")})[\\p{L}\\p{N}]*`, "giu");
    let at = 0;
    for (const m of text.matchAll(re)) {
      if (m.index > at) out.push(text.slice(at, m.index));
      out.push(el("mark", { text: m[0] }));
      at = m.index + m[0].length;
    }
    if (at < text.length) out.push(text.slice(at));
    return out;
  }

  // A candidate's cosine to the query as the answer's quality judged it (the server's
  // logic.quality.best_cosine): its main aspect's (relevance) or a dense source's that embedded
  // the query's text, on the model's own scale. Null when neither was measured.
  function cosineOf(c) {
    const scores = typeof c.relevance === "number" ? [c.relevance] : [];
    for (const h of (c.provenance || {}).hits || []) {
      if (h.aspect && h.queryVectorSource === "query_text") scores.push(h.rawScore);
    }
    return scores.length ? Math.max(...scores) : null;
  }

  function scoreOf(c, q) {
    const cos = cosineOf(c);
    if (cos === null) return null;
    const need = q && typeof q.supportRelevance === "number" ? q.supportRelevance : null;
    const tip = "Relevance: the cosine similarity of this record to your query (the best of its " +
      "descriptions' vectors), on the embedding model's own scale: not relative to the other results." +
      (need !== null ? ` A result counts as a fit from ${fmt(need)} on this scale, or when it holds a value you asked for, every word of the query, or is the record you named.` : "");
    return el("span", { class: "score", title: tip, "data-relevance": cos, tabindex: "0", "aria-label": `relevance ${cos.toFixed(2)}. ${tip}` },
      `relevance ${cos.toFixed(2)}`);
  }

  function card(c, i, r, weak) {
    const meta = c.metadata || {};
    const name = meta.name || meta.title || c.id;
    const q = r.answerQuality;
    const sub = [meta.category, meta.pricing, meta.vendor, meta.released ? `since ${fmt(meta.released)}` : null].filter(Boolean).join(" · ");
    const node = el("li", { class: `card${weak ? " weak" : ""}`, "data-id": c.id },
      el("div", { class: "card-head" },
        el("span", { class: "rank", text: `${i + 1}` }),
        el("h3", { class: "name", text: name }),
        scoreOf(c, q),
        weak ? el("span", { class: "badge", text: "weaker" }) : null),
      sub ? el("p", { class: "sub", text: sub }) : null);
    const lines = matchedOf(c, r);
    if (lines.length) {
      node.append(el("h4", { class: "vh", text: `Why ${name} fits` }));
      for (const parts of lines) node.append(el("p", { class: "matched" }, ...parts));
    }
    const prov = c.provenance || {};
    const text = meta.description || meta.text || "";
    if (text) {
      const cut = text.length > 420 ? `${text.slice(0, 420)}…` : text;
      node.append(el("blockquote", { class: "snippet" }, highlighted(cut, [...(prov.matchedTerms || []), ...(prov.matchedKeywords || [])])));
    }
    const dev = el("details", { class: "dev-box" }, el("summary", { text: "Details for developers: aspects, filters, provenance" }));
    const dl = el("dl", { class: "why" });
    for (const [k, v] of devRows(c)) dl.append(el("dt", { text: k }), el("dd", { text: v }));
    dev.append(dl);
    const hits = prov.hits || [];
    if (hits.length) {
      const t = el("table", { class: "prov" },
        el("caption", { text: `Provenance per source: ${hits.length} source hit${hits.length === 1 ? "" : "s"}` }),
        el("thead", {}, el("tr", {}, ["source", "rank", "raw", "norm.", "round", "query"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, hits.map((h) => el("tr", {},
          el("td", { text: h.source }), el("td", { text: h.rank }), el("td", { text: fmt(h.rawScore) }),
          el("td", { text: fmt(h.normalizedScore) }), el("td", { text: h.round || "" }), el("td", { text: h.query || "" })))));
      dev.append(el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": `Provenance of ${name}` }, t));
    }
    node.append(dev);
    return node;
  }

  // The supported results are cards; the others (the answer quality judged each on its own
  // evidence: answerQuality.supported) fold under "N weaker results".
  function renderCards(r) {
    const list = clear($("cards"));
    const folded = clear($("weaker-cards"));
    const q = r.answerQuality || {};
    const backed = Array.isArray(q.supported) ? new Set(q.supported) : null;
    let weaker = 0;
    (r.candidates || []).forEach((c, i) => {
      const fits = backed === null || backed.has(c.id);
      if (fits) list.append(card(c, i, r, false));
      else { weaker += 1; folded.append(card(c, i, r, true)); }
    });
    $("weaker-summary").textContent = `${weaker} weaker result${weaker === 1 ? "" : "s"}`;
    $("weaker").open = false;
    show($("weaker"), weaker > 0);
    show($("cards"), list.children.length > 0);
    show($("results"), (r.candidates || []).length > 0);
    show($("refine"), true);
  }

  function renderErrors(errors) {
    const list = clear($("errors-list"));
    for (const e of errors) list.append(el("li", { text: `${e.source}: ${e.error}: ${e.message}` }));
    show($("source-errors"), errors.length > 0);
  }

  // ---- rounds and timings -----------------------------------------------------------------------
  // Stage timings side by side (a row of stages); many long names (per source) one per row.
  function timingTable(caption, stages, vertical) {
    const entries = Object.entries(stages || {});
    if (!entries.length) return null;
    const body = vertical
      ? [el("tbody", {}, entries.map(([k, v]) => el("tr", {}, el("th", { scope: "row", text: k }), el("td", { text: ms(v) }))))]
      : [el("thead", {}, el("tr", {}, entries.map(([k]) => el("th", { scope: "col", text: k })))),
        el("tbody", {}, el("tr", {}, entries.map(([, v]) => el("td", { text: ms(v) }))))];
    return el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption },
      el("table", { class: `timings${vertical ? " vertical" : ""}` }, el("caption", { text: caption }), body));
  }

  function renderRounds(r) {
    const box = clear($("rounds-body"));
    const rep = r.retrievalReport;
    const stats = r.executionStats || {};
    if (rep) {
      box.append(el("p", { class: "stop", text: `Stopped: ${rep.stopReason} · reranker: ${rep.reranker} · HyDE: ${rep.hyde}` }));
      for (const rd of rep.rounds || []) {
        const sec = el("section", { class: "round", "aria-label": `Round ${rd.round}` },
          el("h3", { text: `Round ${rd.round}: ${rd.candidatesBeforeFusion} hits → ${rd.candidatesAfterFusion} fused, ${(rd.newEvidence || []).length} new, confidence ${(+rd.confidence).toFixed(2)}, ${ms((rd.stageMs || {}).round_total)}` }),
          el("ul", { class: "queries" }, (rd.queries || []).map((q) => el("li", {},
            el("span", { class: "purpose", text: q.purpose }), " ",
            el("span", { class: "modes", text: (q.modes || []).join(" + ") }), " ",
            el("q", { text: q.text }), q.target ? ` (for ${q.target})` : ""))));
        const facts = [];
        if ((rd.newEvidence || []).length) facts.push(["Added", rd.newEvidence.join(", ")]);
        if ((rd.newlyCovered || []).length) facts.push(["Newly covered", rd.newlyCovered.join(", ")]);
        if ((rd.missing || []).length) facts.push(["Still missing", rd.missing.join(", ")]);
        if ((rd.relaxed || []).length) facts.push(["Relaxed", rd.relaxed.join(", ")]);
        facts.push(["Decision", rd.decision]);
        const dl = el("dl", { class: "why" });
        for (const [k, v] of facts) dl.append(el("dt", { text: k }), el("dd", { text: v }));
        sec.append(dl, timingTable(`Round ${rd.round} stage timings`, rd.stageMs));
        box.append(sec);
      }
    } else {
      box.append(el("p", { text: `One-shot search (${stats.rounds || 1} round, no evidence selection).` }));
    }
    box.append(timingTable("Whole search, per stage", stats.stageMs));
    if (stats.sourceMs) box.append(timingTable("Per source", stats.sourceMs, true));
    show($("rounds-panel"), true);
  }

  // ---- the last evaluation (serve only: the deployed API has none, a 404 leaves it out) --------
  async function loadLastEval() {
    let result;
    try { result = await getJson("eval/last"); } catch (e) { result = { status: 0, body: null }; }
    const box = $("last-eval");
    const b = result.body;
    if (result.status !== 200 || !b) { show(box, false); return; }
    const fig = $("last-eval-figure");
    const wrap = $("last-eval-wrap");
    if (!b.available) {
      $("last-eval-summary").textContent = `No evaluation recorded: ${b.message || "none yet"}`;
      show(fig, false);
      show(wrap, false);
      show(box, true);
      return;
    }
    const systems = Object.keys(b.systems || {});
    const metrics = b.metrics || [];
    $("last-eval-summary").textContent = `${b.dataset} (${b.split}), ${b.queries} queries, ` +
      `${systems.length} systems, run ${b.date}; ${b.errors ? `${b.errors} failed queries (scored 0)` : "no failed query"}.`;
    if (b.figure) {
      const img = $("last-eval-img");
      img.alt = `Bar chart of ${metrics.join(", ")} for ${systems.join(", ")} on ${b.dataset} ` +
        `(${b.split}); the table below gives the same numbers.`;
      img.src = `eval/last.png?v=${encodeURIComponent(b.date)}`;
      $("last-eval-caption").textContent = `Systems × metrics, ${b.dataset} (${b.split}), ${b.date}`;
      show(fig, true);
    } else {
      show(fig, false);
    }
    const table = clear($("last-eval-table"));
    table.append(el("caption", { text: "Mean over the judged queries; latency per query" }));
    table.append(el("thead", {}, el("tr", {},
      el("th", { scope: "col", text: "system" }),
      metrics.map((m) => el("th", { scope: "col", text: m })),
      el("th", { scope: "col", text: "errors" }),
      el("th", { scope: "col", text: "p95 ms" }))));
    const body = el("tbody");
    for (const name of systems) {
      const s = b.systems[name];
      const cells = s.available === false
        ? [el("td", { colspan: metrics.length + 2, text: `unavailable: ${s.reason || ""}` })]
        : [...metrics.map((m) => el("td", { "data-metric": m, text: s[m] === undefined ? "—" : Number(s[m]).toFixed(4) })),
           el("td", { "data-metric": "errors", text: String(s.errors || 0) }),
           el("td", { "data-metric": "p95", text: s.latency_ms ? Number(s.latency_ms.p95).toFixed(1) : "—" })];
      body.append(el("tr", { "data-system": name }, el("th", { scope: "row", text: name }), cells));
    }
    table.append(body);
    show(wrap, true);
    show(box, true);
  }

  // ---- wiring ----------------------------------------------------------------------------------
  async function start() {
    await loadDomains();
    const s = readUrl();
    fillForm(s);
    if (!s.q) loadStatus($("domain").value, null);
    $("search-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const next = formState();
      if (!next.q) return;
      writeUrl(next, false);
      run(next);
    });
    $("refine").addEventListener("submit", (ev) => {
      ev.preventDefault();
      refine($("refine-q").value.trim());
    });
    $("start-over").addEventListener("click", startOver);
    window.addEventListener("popstate", () => run(readUrl()));
    performance.mark("as:ready");
    const evalShown = loadLastEval();  // beside the search, never before it
    if (s.q) await run(s);
    else $("q").focus();
    await evalShown;
    performance.mark("as:eval-shown");
  }

  window.agenticSearch = { last: () => lastResponse, loadLastEval };
  start();
})();
