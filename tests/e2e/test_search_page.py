"""The search page (``GET /`` of ``agentic-search serve``) in a real headless browser.

Debian's ``chromium`` and ``chromium-driver`` driven by selenium, against the same server
``serve`` starts (a thread of this process, on a free loopback port) over a copy of the
session's bundled catalog with one hostile record added. What a person does is what the tests
do: type a query, read the cards, remove a chip, open a comparison, read the "no good match",
and every answer is checked against the API's own JSON. Without the browser the module is
skipped with one line naming the install command, except where ``CI`` is set (``CI=true``, as
CI services and ``.ci/run`` set it): there each browser test fails, so CI cannot skip them
(:mod:`support.browser`, checked by tests/unit/test_browser_gate.py).
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_settings
from support.browser import browser_paths, require
from support.homes import copy_home
from support.lambdas import runtime_over, use_runtime

from agentic_search.pipeline.runner import LocalRunner
from agentic_search_lambda.orchestrators import LocalOrchestrator

#: Chromium and its driver: without them this module is skipped with one line naming the
#: install, or under CI=true each browser test fails (support.browser).
BROWSER = browser_paths()
AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
#: The name a hostile catalog entry carries: markup that runs script if written as HTML.
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_QUERY = "quokka ledger reconciliation"
SCREENS = (
    Path(os.environ.get("AGENTIC_SEARCH_SCREENS", ""))
    if os.environ.get("AGENTIC_SEARCH_SCREENS")
    else None
)


@pytest.fixture(scope="module")
def page_home(tmp_path_factory) -> Path:
    """The working folder ``page_url`` serves (its index, its last evaluation)."""
    return tmp_path_factory.mktemp("page-home") / "home"


@pytest.fixture(scope="module")
def page_url(tools_engine, embedder, catalog_by_id, page_home) -> Iterator[str]:
    """``serve``'s server over a copy of the session index plus the hostile record."""
    from agentic_search.service import SearchService
    from agentic_search_cli.local_server import serving

    home = page_home
    copy_home(Path(tools_engine.deps.settings.agentic_search_home), home)
    # a result cache, as serve has by default: a repeated search is a hit the page says so of
    engine = SearchService.create(
        make_settings(home, cache_backend="sqlite"), "tools", embedder=embedder
    )
    hostile = dict(catalog_by_id["continue"])
    hostile.update(
        id="quokka-probe",
        name=HOSTILE_NAME,
        aliases=[],
        vendor="<script>window.__pwned = 1</script>",
        description="Quokka ledger reconciliation for bookkeepers <b>bold</b> "
        "<img src=x onerror=alert(2)>: matches bank lines to ledger entries.",
        features=["ledger reconciliation", "quokka import"],
        use_cases=["reconcile a quokka ledger"],
    )
    stats = engine.ingest_records([hostile])
    assert stats is not None
    runner = LocalRunner(lambda _: engine.deps)
    rt = runtime_over(engine, orchestrator=LocalOrchestrator(runner))
    try:
        with use_runtime(rt), serving() as url:
            yield url
    finally:
        runner.close()
        engine.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium through chromedriver (selenium)."""
    chromium, driver_path = require(BROWSER)
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:  # pragma: no cover - selenium is in the test extra
        pytest.fail("the browser tests need selenium: pip install -e '.[test]'", pytrace=False)
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.add_argument("--window-size=1280,1000")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    drv.set_page_load_timeout(60)
    try:
        yield drv
    finally:
        drv.quit()


def api_search(base: str, **body: Any) -> dict[str, Any]:
    """POST /search as a client would; the parsed 200 body."""
    req = urllib.request.Request(
        f"{base}/search", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        assert resp.status == 200
        return json.loads(resp.read())


def wait_done(drv: Any, timeout: float = 120.0) -> None:
    """Wait until the page has rendered a search (``body[data-state=done]``)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(drv, timeout).until(
        lambda d: (
            d.find_element("tag name", "body").get_attribute("data-state") in ("done", "error")
        )
    )
    state = drv.find_element("tag name", "body").get_attribute("data-state")
    assert state == "done", drv.find_element("id", "message").text


def open_page(drv: Any, url: str) -> None:
    """Open ``url`` and wait for a search it starts (if any) to render."""
    drv.get(url)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(drv, 30).until(
        lambda d: d.execute_script("return performance.getEntriesByName('as:ready').length")
    )


def card_names(drv: Any) -> list[str]:
    return [e.text for e in drv.find_elements("css selector", "#cards .card .name")]


def names_of(body: dict[str, Any], supported: bool | None = True) -> list[str]:
    """The names of the API's candidates, in order: those the answer's quality says their own
    evidence supports (``supported``, what the page shows as cards; all when it judged none on
    its own), the weaker rest (``False``) or all of them (``None``)."""
    backed = (body.get("answerQuality") or {}).get("supported")
    return [
        str(c["metadata"].get("name") or c["id"])
        for c in body["candidates"]
        if supported is None or backed is None or (c["id"] in backed) == supported
    ]


def weaker_names(drv: Any) -> list[str]:
    """The names of the cards folded under "N weaker results"."""
    return [
        e.get_attribute("textContent")
        for e in drv.find_elements("css selector", "#weaker-cards .card .name")
    ]


def screenshot(drv: Any, name: str, tmp_path: Path) -> Path:
    """A PNG of the page (into $AGENTIC_SEARCH_SCREENS when set, else the test's tmp dir)."""
    folder = SCREENS or tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    assert drv.save_screenshot(str(path))
    assert path.stat().st_size > 1000
    return path


def test_typed_query_shows_the_apis_results_in_order_with_why_and_snippet(
    browser, page_url, tmp_path
):
    # GIVEN the page, opened without a query
    open_page(browser, f"{page_url}/")
    assert browser.find_element("tag name", "body").get_attribute("data-state") == "idle"
    # WHEN a person types a query and presses Enter
    box = browser.find_element("id", "q")
    box.send_keys("free code editor")
    limit = browser.find_element("id", "limit")
    limit.clear()
    limit.send_keys("5\n")
    wait_done(browser)
    # THEN the URL carries the query, and the cards are the API's answer, in its order
    assert "q=free+code+editor" in browser.current_url and "limit=5" in browser.current_url
    body = api_search(page_url, query="free code editor", limit=5, domain="tools")
    assert card_names(browser) == names_of(body)
    assert weaker_names(browser) == names_of(body, supported=False)
    top = next(c for c in body["candidates"] if c["metadata"]["name"] == card_names(browser)[0])
    first = browser.find_element("css selector", "#cards .card")
    assert first.get_attribute("data-id") == top["id"]
    # the score is the cosine the answer's quality judged, with what it is in its tooltip
    cosine = max(
        [top["relevance"]]
        + [
            h["rawScore"]
            for h in top["provenance"]["hits"]
            if h.get("aspect") and h.get("queryVectorSource") == "query_text"
        ]
    )
    score = first.find_element("css selector", ".score")
    assert score.text == f"relevance {cosine:.2f}"
    assert "cosine similarity" in score.get_attribute("title")
    assert "not relative to the other results" in score.get_attribute("title")
    # each card says why in plain words; the aspects are behind the developer disclosure
    matched = first.find_element("css selector", ".matched").text
    assert matched.startswith("Matched: "), matched
    dev = first.find_element("css selector", ".dev-box")
    assert dev.get_attribute("open") is None
    labels = {e.get_attribute("textContent") for e in dev.find_elements("css selector", "dt")}
    assert "Fused score" in labels and labels & {"Matched aspects", "Filters"}, labels
    # the snippet is the record's description, the query's matched words marked
    snippet = first.find_element("css selector", ".snippet")
    assert top["metadata"]["description"].startswith(snippet.text.rstrip("…"))
    marked = {m.text.lower() for m in snippet.find_elements("tag name", "mark")}
    assert marked and all(
        any(m.startswith(t) for t in top["provenance"]["matchedTerms"]) for m in marked
    ), marked
    assert " . " not in snippet.text
    # the rounds, the timings and the raw JSON are there
    rounds = browser.find_element("id", "rounds-body").get_attribute("textContent")
    assert "Round 1:" in rounds and "Stopped:" in rounds and "Whole search, per stage" in rounds
    raw = json.loads(browser.find_element("id", "raw").get_attribute("textContent"))
    assert [c["id"] for c in raw["candidates"]] == [c["id"] for c in body["candidates"]]
    status = browser.find_element("id", "catalog-status").text
    assert "Domain tools" in status and "sync" in status
    screenshot(browser, "search-page-desktop.png", tmp_path)


#: A year written as a float ("2023.0"): the page writes whole numbers as integers.
FLOAT_YEAR = re.compile(r"\b(?:19|20)\d\d\.0\b")


def shown_keywords(drv: Any) -> list[str]:
    """Every word the page shows as a matched keyword of the query, on every card."""
    return [e.get_attribute("textContent") for e in drv.find_elements("css selector", ".card .kw")]


@pytest.mark.parametrize(
    "query", ["a tool to file my taxes in Sweden", "accounting tool for freelancers"]
)
def test_a_weak_match_shows_only_the_supported_results_as_cards(browser, page_url, query, tmp_path):
    from agentic_search.logic.keywords import NEVER_SHOWN

    # GIVEN a need the catalog hardly covers
    open_page(browser, f"{page_url}/?q={query.replace(' ', '+')}")
    wait_done(browser)
    body = api_search(page_url, query=query)
    quality = body["answerQuality"]
    assert quality["verdict"] in ("weak", "none"), quality
    backed = quality["supported"]
    assert backed is not None, "the answer judged its candidates one by one"
    assert browser.find_element("id", "verdict").is_displayed()
    # THEN only the candidates their own evidence supports are cards
    cards = [
        e.get_attribute("data-id") for e in browser.find_elements("css selector", "#cards .card")
    ]
    assert cards == backed
    # and the rest fold, closed, under "N weaker results"
    weaker = [c["id"] for c in body["candidates"] if c["id"] not in backed]
    folded = browser.find_elements("css selector", "#weaker-cards .card")
    assert [e.get_attribute("data-id") for e in folded] == weaker
    fold = browser.find_element("id", "weaker")
    if weaker:
        assert fold.is_displayed() and fold.get_attribute("open") is None
        n = len(weaker)
        assert browser.find_element("id", "weaker-summary").text == (
            f"{n} weaker result{'' if n == 1 else 's'}"
        )
        assert all(not e.is_displayed() for e in folded)  # folded away
        assert f"Only {len(backed)} of the {len(body['candidates'])} results" in (
            browser.find_element("id", "verdict-reason").text
        )
    else:
        assert not fold.is_displayed()
    # no function word is shown as a matched keyword, and no year as a float
    if weaker:  # open the fold: its cards are read too
        fold.find_element("tag name", "summary").click()
    words = shown_keywords(browser)
    assert not [w for w in words if w.lower() in NEVER_SHOWN], words
    text = browser.find_element("id", "results").get_attribute("textContent")
    assert not FLOAT_YEAR.search(text), FLOAT_YEAR.search(text)
    for c in body["candidates"]:
        released = c["metadata"].get("released")
        assert released is None or isinstance(released, int), released
    screenshot(
        browser, f"search-page-weak-{len(backed)}-of-{len(body['candidates'])}.png", tmp_path
    )


def test_the_weak_match_query_the_issue_tried_has_something_to_fold(page_url):
    # the second query above must exercise the fold: some supported, some weaker
    body = api_search(page_url, query="accounting tool for freelancers")
    backed = body["answerQuality"]["supported"]
    assert 0 < len(backed) < len(body["candidates"]), body["answerQuality"]


def test_a_cache_hit_says_when_it_was_computed_and_how_long_the_lookup_took(browser, page_url):
    from selenium.webdriver.support.ui import WebDriverWait

    query = "markdown note taking app"
    api_search(page_url, query=query)  # computed and stored
    open_page(browser, f"{page_url}/?q={query.replace(' ', '+')}")
    wait_done(browser)
    cache = json.loads(browser.find_element("id", "raw").get_attribute("textContent"))["cache"]
    assert cache["backend"] == "sqlite"  # the local default
    assert cache["hit"] is True and cache["computedAt"] and cache["lookupMs"] >= 0
    WebDriverWait(browser, 30).until(
        lambda d: "result cache" in d.find_element("id", "message").text
    )
    message = browser.find_element("id", "message").text
    assert "from the result cache (computed " in message and "looked up in " in message
    assert message.endswith(" ms)"), message


def test_a_url_opened_directly_searches_and_the_back_button_restores(browser, page_url):
    # GIVEN two searches reached by URL
    open_page(browser, f"{page_url}/?q=vector+database&limit=3&rounds=1")
    wait_done(browser)
    first = card_names(browser)
    # the form shows the URL's query and options, and the search used them
    assert browser.find_element("id", "q").get_attribute("value") == "vector database"
    assert browser.find_element("id", "rounds").get_attribute("value") == "1"
    assert len(first) + len(weaker_names(browser)) == 3
    assert first == names_of(api_search(page_url, query="vector database", limit=3, rounds=1))
    raw = json.loads(browser.find_element("id", "raw").get_attribute("textContent"))
    assert raw["executionStats"]["rounds"] == 1
    box = browser.find_element("id", "q")
    box.clear()
    box.send_keys("terminal emulator\n")
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 120).until(lambda d: "terminal" in d.find_element("id", "message").text)
    wait_done(browser)
    assert card_names(browser) != first
    # WHEN the back button is pressed
    browser.back()
    WebDriverWait(browser, 120).until(
        lambda d: d.find_element("id", "q").get_attribute("value") == "vector database"
    )
    wait_done(browser)
    # THEN the first search is shown again, with its options
    assert card_names(browser) == first
    assert browser.find_element("id", "rounds").get_attribute("value") == "1"


def test_removing_a_chip_reruns_without_it(browser, page_url):
    query = "free open source code editor released after 2020"
    # GIVEN a query read with a time range
    open_page(browser, f"{page_url}/?q={query.replace(' ', '+')}&limit=5")
    wait_done(browser)
    chip = browser.find_element("css selector", '[data-chip="filter:released:gte"]')
    group = chip.find_element("xpath", "..").get_attribute("class")
    assert "temporal" in group
    # WHEN the person removes it with the keyboard (focus its button, press Enter)
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    chip.find_element("css selector", "button").send_keys(Keys.ENTER)
    WebDriverWait(browser, 120).until(lambda d: "drop=" in d.current_url)
    wait_done(browser)
    # THEN the search ran again without it: the API's answer for that override
    assert "drop=filter%3Areleased%3Agte" in browser.current_url
    assert not browser.find_elements("css selector", '[data-chip="filter:released:gte"]')
    assert browser.find_elements("css selector", '[data-dropped="filter:released:gte"]')
    body = api_search(page_url, query=query, limit=5, drop=["filter:released:gte"])
    assert all(c["field"] != "released" for c in body["intent"]["constraints"])
    assert card_names(browser) == names_of(body)
    full = api_search(page_url, query=query, limit=5)
    assert any(c["field"] == "released" for c in full["intent"]["constraints"])
    # and "restore" brings it back
    browser.find_element("css selector", ".chip-restore").click()
    WebDriverWait(browser, 120).until(lambda d: "drop=" not in d.current_url)
    wait_done(browser)
    assert browser.find_elements("css selector", '[data-chip="filter:released:gte"]')
    assert card_names(browser) == names_of(full)


def test_refining_sends_the_conversation_and_keeps_it_in_the_url(browser, page_url):
    from selenium.webdriver.support.ui import WebDriverWait

    # GIVEN a search's results
    open_page(browser, f"{page_url}/?q=AI+code+completion+tools&limit=5")
    wait_done(browser)
    shown = [
        e.get_attribute("data-id") for e in browser.find_elements("css selector", "#cards .card")
    ]
    assert not browser.find_element("id", "refine").get_attribute("hidden")
    # WHEN the person refines them in the box under the results
    box = browser.find_element("id", "refine-q")
    box.send_keys("only the free ones\n")
    WebDriverWait(browser, 120).until(lambda d: "hq=" in d.current_url)
    wait_done(browser)
    # THEN the URL holds the earlier turn (its query and the ids shown) and the new query,
    # and the cards are the API's answer to that conversation
    assert "q=only+the+free+ones" in browser.current_url
    assert "hq=AI+code+completion+tools" in browser.current_url
    history = [{"query": "AI code completion tools", "ids": shown}]
    body = api_search(page_url, query="only the free ones", limit=5, history=history)
    assert body["intent"]["followUp"]["kind"] == "filter"
    assert card_names(browser) == names_of(body)
    head = browser.find_element("id", "follow-up-head").text
    assert "follow-up (filter) of turn 1" in head and "AI code completion tools free" in head
    turns = [e.text for e in browser.find_elements("css selector", "#turns .turn-q")]
    assert turns == ["AI code completion tools"]
    # a page opened from that URL asks the same conversation
    url = browser.current_url
    open_page(browser, url)
    wait_done(browser)
    assert card_names(browser) == names_of(body)
    # and "Start over" forgets the conversation: the query alone
    browser.find_element("id", "start-over").click()
    WebDriverWait(browser, 120).until(lambda d: "hq=" not in d.current_url)
    wait_done(browser)
    assert not browser.find_elements("css selector", "#turns li")
    assert browser.find_element("id", "follow-up").get_attribute("hidden") is not None
    alone = api_search(page_url, query="only the free ones", limit=5)
    assert card_names(browser) == names_of(alone)


def test_a_comparison_query_shows_the_table(browser, page_url):
    open_page(browser, f"{page_url}/?q=Cursor+vs+Windsurf&limit=5")
    wait_done(browser)
    cmp = api_search(page_url, query="Cursor vs Windsurf", limit=5)["comparison"]
    table = browser.find_element("id", "comparison-table")
    heads = [
        th.get_attribute("textContent") for th in table.find_elements("css selector", "thead th")
    ]
    assert heads == ["field"] + [r["name"] for r in cmp["records"]]
    rows = {
        tr.find_element("tag name", "th").get_attribute("textContent"): (
            tr.get_attribute("class"),
            [td.text for td in tr.find_elements("tag name", "td")],
        )
        for tr in table.find_elements("css selector", "tbody tr")
    }
    assert list(rows) == cmp["fields"]
    # each cell is the record's value; a row is marked "differs" exactly when the values do
    for field, (cls, cells) in rows.items():
        values = [r["values"].get(field) for r in cmp["records"]]
        shown = [
            ", ".join(map(fmt_value, v)) if isinstance(v, list) else fmt_value(v) for v in values
        ]
        assert cells == shown, field
        assert cls == ("differs" if len(set(shown)) > 1 else "same"), field
    assert {c for c, _ in rows.values()} == {"same", "differs"}


def fmt_value(v: Any) -> str:
    """How the page writes one value (booleans as yes/no, whole floats without .0)."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else f"{round(v, 3):g}"
    return str(v)


def test_an_unanswerable_query_explains_the_missed_threshold(browser, page_url):
    query = "restaurant table reservation system"
    open_page(browser, f"{page_url}/?q={query.replace(' ', '+')}")
    wait_done(browser)
    body = api_search(page_url, query=query)
    assert body["answerQuality"]["verdict"] == "none"
    verdict = browser.find_element("id", "verdict")
    assert verdict.is_displayed()
    assert browser.find_element("id", "verdict-h").text == "No good match"
    text = browser.find_element("id", "verdict-reason").text
    best, _, threshold = body["answerQuality"]["reason"].split(",")[0].split()[2:5]
    assert f"scored {best}" in text and f"threshold of {threshold}" in text
    assert not browser.find_element("id", "results").is_displayed()


def test_catalog_markup_renders_as_text_and_runs_no_script(browser, page_url):
    open_page(browser, f"{page_url}/")
    browser.execute_script("window.alert = () => { window.__alerted = true; };")
    box = browser.find_element("id", "q")
    box.send_keys(HOSTILE_QUERY + "\n")
    wait_done(browser)
    card = browser.find_element("css selector", '#cards .card[data-id="quokka-probe"]')
    assert card.find_element("css selector", ".name").text == HOSTILE_NAME
    assert "<script>window.__pwned = 1</script>" in card.find_element("css selector", ".sub").text
    # no element came out of the catalog's markup, and nothing ran
    assert not browser.find_elements("css selector", "main img, main script, main b")
    assert browser.execute_script("return [window.__alerted, window.__pwned]") == [None, None]


def test_the_page_has_a_strict_csp_and_no_outside_origin(page_url):
    with urllib.request.urlopen(f"{page_url}/", timeout=30) as resp:
        csp = resp.headers["Content-Security-Policy"]
        html = resp.read().decode()
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "http://" not in html.replace("http://127.0.0.1", "") and "https://" not in html
    for path in ("/ui/app.js", "/ui/app.css"):
        with urllib.request.urlopen(f"{page_url}{path}", timeout=30) as resp:
            assert resp.headers["Content-Security-Policy"] == csp
            text = resp.read().decode()
        assert "https://" not in text and "http://" not in text


def axe_violations(drv: Any) -> list[tuple[str, str, int]]:
    """axe-core's serious and critical violations on the page as it is: (rule, impact,
    nodes)."""
    drv.execute_script(AXE.read_text("utf-8"))
    result = drv.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations),"
        " e => done(String(e)));"
    )
    assert isinstance(result, list), result
    return [
        (v["id"], v["impact"], len(v["nodes"]))
        for v in result
        if v["impact"] in ("serious", "critical")
    ]


def test_no_serious_accessibility_violations_and_phone_width(browser, page_url, tmp_path):
    # a page with a removed chip (restore buttons), a weak answer and its marked cards
    query = "free+open+source+code+editor+released+after+2020+like+vscode"
    open_page(browser, f"{page_url}/?q={query}&limit=5&drop=filter%3Areleased%3Agte")
    wait_done(browser)
    assert browser.find_elements("css selector", ".chip-restore")
    assert axe_violations(browser) == []
    # a comparison with every panel open (rounds, raw JSON, provenance tables)
    open_page(browser, f"{page_url}/?q=Cursor+vs+Windsurf&limit=5")
    wait_done(browser)
    for sel in ("#rounds-panel", "#raw-panel", ".dev-box"):
        browser.execute_script(f"document.querySelector('{sel}').open = true")
    assert axe_violations(browser) == []
    # at phone width nothing scrolls sideways and the controls stay usable
    browser.set_window_size(390, 844)
    try:
        wide = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert wide <= 0
        assert browser.find_element("id", "go").is_displayed()
        screenshot(browser, "search-page-phone.png", tmp_path)
    finally:
        browser.set_window_size(1280, 1000)


def get(url: str) -> tuple[int, Any, bytes]:
    """GET ``url``: (status, headers (case-insensitive), body), an error status included."""
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def test_the_page_shows_the_last_evaluation_figure_and_table(
    browser, page_url, page_home, tmp_path, monkeypatch, capsys
):
    from selenium.webdriver.support.ui import WebDriverWait
    from support.datasets import make_dataset

    from agentic_search_cli.main import main

    def eval_shown(d: Any) -> bool:
        return bool(d.execute_script("return performance.getEntriesByName('as:eval-shown').length"))

    # GIVEN serve over a folder no evaluation ran in: the section says so, with no figure
    open_page(browser, f"{page_url}/")
    WebDriverWait(browser, 30).until(eval_shown)
    assert browser.find_element("id", "last-eval").is_displayed()
    none = browser.find_element("id", "last-eval-summary").text
    assert none.startswith("No evaluation recorded") and "agentic-search eval" in none
    assert not browser.find_element("id", "last-eval-figure").is_displayed()
    assert get(f"{page_url}/eval/last.png")[0] == 404
    # WHEN `eval` runs on a tiny BEIR dataset over that folder (the CLI, in this process)
    monkeypatch.setenv("AGENTIC_SEARCH_HOME", str(page_home))
    dataset = make_dataset(tmp_path)
    capsys.readouterr()  # what the in-process server printed so far (Powertools' metrics)
    code = main(["eval", "--dataset", str(dataset), "--systems", "bm25,dense", "--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    # THEN serve answers its summary: the figures eval printed, and its PNG, same origin and CSP
    status, headers, raw = get(f"{page_url}/eval/last")
    assert status == 200
    summary = json.loads(raw)
    assert summary["available"] is True and summary["dataset"] == "tiny"
    assert summary["queries"] == printed["queries"] and summary["errors"] == 0
    for name in ("bm25", "dense"):
        for metric in summary["metrics"]:
            assert summary["systems"][name][metric] == printed["systems"][name][metric]
    status, png_headers, png = get(f"{page_url}/eval/last.png")
    assert status == 200 and png.startswith(b"\x89PNG")
    assert png_headers["Content-Type"] == "image/png"
    assert png_headers["Content-Security-Policy"] == headers["Content-Security-Policy"]
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    # AND the page, reloaded, shows the figure (loaded: same origin) with its alt text
    open_page(browser, f"{page_url}/")
    WebDriverWait(browser, 30).until(eval_shown)
    img = browser.find_element("id", "last-eval-img")
    WebDriverWait(browser, 30).until(
        lambda d: d.execute_script("return arguments[0].complete", img)
    )
    assert browser.execute_script("return arguments[0].naturalWidth", img) > 100
    alt = img.get_attribute("alt")
    assert "bm25" in alt and "dense" in alt and "tiny" in alt and "ndcg@10" in alt
    # AND the table's numbers are the summary's, system by system and metric by metric
    table = browser.find_element("id", "last-eval-table")
    heads = [th.text for th in table.find_elements("css selector", "thead th")]
    assert heads == ["system", *summary["metrics"], "errors", "p95 ms"]
    rows = table.find_elements("css selector", "tbody tr")
    assert [r.get_attribute("data-system") for r in rows] == list(summary["systems"])
    for row in rows:
        system = summary["systems"][row.get_attribute("data-system")]
        cells = {
            td.get_attribute("data-metric"): td.text for td in row.find_elements("tag name", "td")
        }
        for metric in summary["metrics"]:
            assert cells[metric] == f"{system[metric]:.4f}", metric
        assert cells["errors"] == "0"
        assert cells["p95"] == f"{system['latency_ms']['p95']:.1f}"
    # AND the page with the section still passes the accessibility check
    assert axe_violations(browser) == []
    screenshot(browser, "search-page-last-eval.png", tmp_path)
    # AND where the route is not served (the deployed API: 404), the section is left out
    browser.execute_script(
        "const real = window.fetch;"
        "window.fetch = (u, i) => String(u).startsWith('eval/last') ?"
        " Promise.resolve(new Response('{}', {status: 404})) : real(u, i);"
    )
    browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.agenticSearch.loadLastEval().then(() => done(true));"
    )
    assert not browser.find_element("id", "last-eval").is_displayed()


def test_the_override_and_the_domains_are_documented_and_validated(page_url):
    with urllib.request.urlopen(f"{page_url}/openapi.json", timeout=30) as resp:
        doc = json.loads(resp.read())
    body_ref = doc["paths"]["/search"]["post"]["requestBody"]["content"]["application/json"]
    name = body_ref["schema"]["$ref"].rsplit("/", 1)[1]
    drop = doc["components"]["schemas"][name]["properties"]["drop"]
    assert "filter:FIELD:OP" in drop["description"]
    with urllib.request.urlopen(f"{page_url}/domains", timeout=30) as resp:
        domains = json.loads(resp.read())
    from jsonschema import Draft202012Validator

    ok = doc["paths"]["/domains"]["get"]["responses"]["200"]["content"]["application/json"]
    validator = Draft202012Validator({**ok["schema"], "components": doc["components"]})
    assert list(validator.iter_errors(domains)) == []
    tools = domains["domains"][0]
    assert (tools["name"], tools["temporalField"]) == ("tools", "released")
    from support.http import post_search_error

    status, err = post_search_error(page_url, {"query": "free code editor", "drop": ["nope"]})
    assert status == 422 and [d["field"] for d in err["detail"]] == ["drop"]
