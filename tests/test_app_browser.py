"""The app in a real browser: headless Chromium against `python -m app`.

One server (with one training worker: `server` in tests/conftest.py) serves every
test in this module; each test opens its own page in its own browser. Configs are
tiny so the worker answers in seconds.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.keys import Keys

from app import ids
from tempsup.model.config import DEFAULTS, query_string
from tempsup.paper.presets import presets
from tests.browser import (
    app_server,
    click,
    comparable,
    compare_scrubber,
    config_of,
    css,
    driver_session,
    find,
    frame_count,
    frame_label,
    gated_app_server,
    n_traces,
    open_page,
    set_viewport,
    settled,
    shown_seed,
    text_of,
    wait_for,
)
from tests.browser import explorer_status as status_text
from tests.browser import url_query as query

pytestmark = pytest.mark.browser

# The explorer's job widget and player, the other pages' widgets (app/ids.py)
EX = ids.EXPLORER
TRAIN, CANCEL, BAR, STATUS = (css(ids.job(p, EX)) for p in (ids.RUN, ids.CANCEL, ids.BAR, ids.TEXT))
PLAY, PREV, NEXT, FRAME, LABEL = (
    css(ids.player(p, EX)) for p in (ids.PLAY, ids.PREV, ids.NEXT, ids.FRAME, ids.FRAME_LABEL)
)
PANEL_GRAPHS = {p: css(ids.graph(EX, p)) for p in ("directions", "loss", "projections", "eigen")}

TINY = (
    "model=linear&k=2&sparsity=0.5&hidden=2&inputs=1&steps=200&batch=64&seeds=2&snapshot_every=10"
)


def seed_menu(driver) -> list[str]:
    """The seed menu's entries (opens and closes it)."""
    click(driver, "#seed-pick")
    texts = wait_for(
        lambda: [
            o.text
            for o in driver.find_elements("css selector", ".dash-dropdown-option")
            if o.text.startswith("seed ")
        ],
        what="seed menu",
    )
    click(driver, "#seed-pick")
    wait_for(
        lambda: not driver.find_elements("css selector", ".dash-dropdown-option"),
        what="the seed menu closed",
    )
    return texts


def pick_seed(driver, seed: int) -> None:
    """Choose `seed` in the seed menu, as a user does."""
    click(driver, "#seed-pick")

    def choose() -> bool:  # found and clicked in one go: a new frame redraws the menu
        next(
            o
            for o in driver.find_elements("css selector", ".dash-dropdown-option")
            if re.match(rf"seed {seed}\b", o.text)  # "seed 3: …", "seed 3 — best (…): …"
        ).click()
        return True

    wait_for(choose, what=f"seed {seed} in the menu")
    wait_for(lambda: f"· seed {seed}:" in frame_label(driver), what=f"seed {seed} shown")


def go_to_frame(driver, index: int) -> None:
    """Step with ◀ / ▶ until the player shows frame `index` (0-based): one click, then
    the frame it leads to, before the next click."""
    while True:
        cur, _ = wait_for(lambda: frame_count(driver)[1] and frame_count(driver), what="frames")
        if cur - 1 == index:
            return
        click(driver, PREV if cur - 1 > index else NEXT)
        wanted = cur - 1 if cur - 1 > index else cur + 1
        wait_for(lambda w=wanted: frame_count(driver)[0] == w, what=f"frame {wanted} shown")


def without_total(label: str) -> str:
    return re.sub(r"frame (\d+) of \d+", r"frame \1", label)


def screen(driver) -> dict:
    """The label and every panel's traces as drawn, read in one script (no render between)."""
    return driver.execute_script(
        """
        const out = {label: document.querySelector(arguments[1]).innerText};
        for (const [panel, graph] of Object.entries(arguments[0])) {
          const g = document.querySelector(graph + ' .js-plotly-plot');
          out[panel] = ((g && g.data) || []).map((t) => {
            const c = Object.assign({}, t);
            delete c.uid;
            return c;
          });
        }
        return out;
        """,
        PANEL_GRAPHS,
        LABEL,
    )


def test_page_loads_with_trained_default_example(server, browser):
    browser.get(server)
    # the default example is queued at start-up; its frames appear without any click
    wait_for(
        lambda: n_traces(browser, PANEL_GRAPHS["directions"]) > 0, what="default example frames"
    )
    wait_for(lambda: frame_count(browser)[1] > 1, what="several frames")
    others = [PANEL_GRAPHS[p] for p in ("loss", "projections", "eigen")]
    wait_for(lambda: all(n_traces(browser, g) > 0 for g in others), what=f"{others} drawn")
    assert query(browser)["model"] == ["ssm"]


def test_moving_a_control_changes_the_url(server, browser):
    browser.get(server)
    wait_for(lambda: "model" in query(browser), what="URL with the config")
    click(browser, "#ctl-model input[value='linear']")
    wait_for(lambda: query(browser).get("model") == ["linear"], what="model=linear in the URL")


def test_train_shows_progress_then_frames_and_play_advances(server, browser):
    browser.get(f"{server}/?{TINY}&seed=11")
    # the link trains by itself; frames stream in and the job finishes
    wait_for(lambda: frame_count(browser)[1] >= 2, what="first frames")
    wait_for(lambda: "Done" in find(browser, STATUS).text, what="job done")
    wait_for(lambda: frame_count(browser) == (21, 21), what="its last frame of 21 shown")
    # change a control: not trained yet; Train trains it with a progress bar
    click(browser, "#ctl-model input[value='ssm']")
    wait_for(lambda: "press Train" in find(browser, STATUS).text, what="hint")
    click(browser, TRAIN)
    wait_for(
        lambda: find(browser, BAR).get_attribute("style") != "width: 0%;", what="the bar moves"
    )
    wait_for(lambda: "Done" in find(browser, STATUS).text, what="ssm done")
    # one frame back, then Play advances the scrubber to the last frame and stops there
    # (the step back is seen before Play: read after it, a busy machine's one-frame play
    # could already be over, and nothing would be seen to advance)
    total = frame_count(browser)[1]
    click(browser, PREV)
    wait_for(lambda: frame_count(browser) == (total - 1, total), what="one frame back")
    click(browser, PLAY)
    wait_for(lambda: frame_count(browser) == (total, total), what="playing advances frames")


LONG = "model=rnn&k=3&sparsity=0.9&steps=100000&seeds=4&snapshot_every=100"


def test_cancel_stops_a_long_job_and_keeps_its_frames(server, browser, store):
    browser.get(f"{server}/?{LONG}")
    wait_for(lambda: frame_count(browser)[1] >= 2, what="frames streaming in")
    click(browser, CANCEL)
    # the worker's own words, written when it stopped (not the "Cancelling…" of the click)
    wait_for(lambda: "cancelled at step" in status_text(browser), what="cancelled by the worker")
    status = store.status(config_of(LONG).key)
    assert status.state.value == "cancelled" and status.n_frames >= 2
    # what was trained stays on screen, every kept frame of it, with its seeds in the menu
    kept = (status.n_frames, status.n_frames)
    wait_for(lambda: frame_count(browser) == kept, what="the kept frames")
    assert len(seed_menu(browser)) == 4
    # and Export exports it (it said "Nothing to export yet" after Cancel)
    click(browser, "#btn-export-html")
    path = wait_for(lambda: next(iter(browser.download_dir.glob("*.html")), None), what="export")
    assert path.name == f"tempsup-{status.key}.html"
    assert "Nothing to export" not in status_text(browser)


def test_export_downloads_html_with_frames(server, browser):
    browser.get(f"{server}/?{TINY}&seed=12&view_seed=1")
    wait_for(lambda: "Done" in status_text(browser), what="done")
    wait_for(lambda: shown_seed(browser) == 1, what="seed 1 shown")
    click(browser, "#btn-export-html")
    path = wait_for(lambda: next(iter(browser.download_dir.glob("*.html")), None), what="download")
    text = path.read_text()
    config = config_of(TINY + "&seed=12")
    assert f'"k": {config.k}' in text and config.key in text
    assert "Plotly.addFrames(" in text and text.count('"traces":') >= config.n_snapshots
    assert "seed 1 of 2" in text  # the seed on screen, not the best one
    assert '<script src="http' not in text  # offline: plotly.js is inlined
    # the page came from this machine only: no useless loopback link inside the file
    assert server not in text and "127.0.0.1" not in text and "localhost:" not in text


def test_shared_link_restores_controls(server, browser):
    browser.get(f"{server}/?model=rnn&k=4&sparsity=0.95&hidden=3&steps=100&seeds=1&batch=32")
    wait_for(lambda: find(browser, "#ctl-model input[value='rnn']").is_selected(), what="rnn")
    assert query(browser)["k"] == ["4"]
    wait_for(
        lambda: (
            browser.find_element("css selector", "#ctl-k [role='slider']").get_attribute(
                "aria-valuenow"
            )
            == "4"
        ),
        what="k slider at 4",
    )
    wait_for(
        lambda: find(browser, "#ctl-sparsity-box").get_attribute("value") in ("0.95", ".95"),
        what="the sparsity box at 0.95",
    )


def test_phase_sweep_draws_and_a_click_opens_the_point(server, browser):
    open_page(browser, f"{server}/phase")
    for box, value in (("#phase-sparsities", "0.3, 0.9"), ("#phase-seeds", "2"),
                       ("#phase-steps", "100")):  # fmt: skip
        el = find(browser, box)
        el.clear()
        el.send_keys(value + "\n")
    click(browser, css(ids.job(ids.RUN, ids.PHASE)))
    wait_for(
        lambda: "Done" in find(browser, css(ids.job(ids.TEXT, ids.PHASE))).text, what="sweep done"
    )
    wait_for(lambda: n_traces(browser, "#phase-graph") >= 3, what="diagram traces")
    # click the first |kθ| marker: the explorer opens with that point's config
    from selenium.webdriver.common.action_chains import ActionChains

    marker = find(browser, "#phase-graph .scatterlayer .trace .points path")
    # plotly listens on the layer above its markers: hover, and once plotly holds the
    # marker's hover data (what its click opens), click at the marker's spot
    ActionChains(browser).move_to_element(marker).perform()
    wait_for(
        lambda: browser.execute_script(
            "const g = document.querySelector('#phase-graph .js-plotly-plot');"
            "return !!(g && g._hoverdata && g._hoverdata.length);"
        ),
        what="the marker hovered",
    )
    ActionChains(browser).click().perform()
    wait_for(lambda: "sparsity=0.3" in browser.current_url, what="explorer link")
    wait_for(lambda: "Done" in find(browser, STATUS).text, what="point run served")


def test_compare_two_runs_with_one_scrubber(server, browser):
    from urllib.parse import urlencode

    left = TINY + "&seed=21"
    right = TINY.replace("model=linear", "model=ssm") + "&seed=21"
    browser.get(f"{server}/compare?" + urlencode({"left": left, "right": right}))
    wait_for(lambda: frame_label_compare(browser).count("frame 21 of 21") == 2, what="both runs")
    sides = [css(ids.compare_graph(side, "directions")) for side in ("left", "right")]
    wait_for(lambda: all(n_traces(browser, g) > 0 for g in sides), what="both sides drawn")
    # the linked scrubber: start of training on both sides
    click(browser, css(ids.player(ids.PLAY, ids.COMPARE)))
    wait_for(lambda: frame_label_compare(browser).count("frame 21 of 21") == 0, what="scrub")


def frame_label_compare(driver) -> str:
    return find(driver, "#compare-label").text


def test_lab_trains_and_shows_the_four_panels(server, browser):
    open_page(browser, f"{server}/lab")
    epochs = find(browser, "#lab-epochs")
    epochs.clear()
    epochs.send_keys("3\n")  # a debounced box: Enter commits it, the link then says so
    wait_for(lambda: query(browser).get("epochs") == ["3"], what="epochs=3 in the link")
    click(browser, css(ids.job(ids.RUN, ids.LAB)))
    wait_for(
        lambda: "Done" in find(browser, css(ids.job(ids.TEXT, ids.LAB))).text, what="lab run done"
    )
    wait_for(
        lambda: "frame" in find(browser, css(ids.player(ids.FRAME_LABEL, ids.LAB))).text,
        what="frames",
    )
    panels = [css(ids.graph(ids.LAB, p)) for p in ("matrices", "columns", "r2", "loss")]
    wait_for(lambda: all(n_traces(browser, g) > 0 for g in panels), what=f"{panels} drawn")


def test_lab_sweep_over_m(server, browser):
    open_page(browser, f"{server}/lab")
    for box, value in (("#lab-epochs", "2"), ("#lab-sweep-ms", "2, 6"), ("#lab-sweep-wds", "1")):
        el = find(browser, box)
        el.clear()
        el.send_keys(value + "\n")
    wait_for(lambda: query(browser).get("ms") == ["2, 6"], what="the sweep's m in the link")
    click(browser, css(ids.job(ids.RUN, ids.LAB_SWEEP)))
    wait_for(
        lambda: "Done" in find(browser, css(ids.job(ids.TEXT, ids.LAB_SWEEP))).text,
        what="lab sweep done",
    )
    # WᵀW per point (2) and 3 measures against m: the finished sweep figure
    wait_for(lambda: n_traces(browser, "#lab-sweep-graph") >= 5, what="sweep figure traces")
    assert find(browser, css(ids.job(ids.ERROR, ids.LAB_SWEEP))).text == ""


def test_gallery_fills_in_the_background_and_opens_a_preset(tmp_path_factory, browser):
    cache = tmp_path_factory.mktemp("gallery") / "jobs"
    with app_server(cache, env={"TEMPSUP_PRESETS": "quick"}) as url:
        browser.get(f"{url}/gallery")
        n = len(presets(quick=True))  # one card per preset
        wait_for(lambda: len(browser.find_elements("css selector", ".preset")) == n, what="cards")
        # the first preset (the linear spiral sink) is trained first: its claims appear
        spiral = "#preset-spiral-sink"
        wait_for(lambda: "held" in find(browser, spiral).text, 240, "spiral-sink claims")

        def card() -> tuple[str, int]:  # read in one go: the gallery redraws cards as runs finish
            text = browser.find_element("css selector", spiral).text
            return text, len(browser.find_elements("css selector", f"{spiral} .claims li"))

        # the numbers behind each claim and its criterion are on the card (visible text)
        shown, n_claims = wait_for(card, what="the spiral-sink card")
        assert "seeds" in shown
        assert n_claims and shown.count("measured: ") == shown.count("criterion: ") == n_claims
        click(browser, f"{spiral} a.chip")
        wait_for(lambda: "model=linear" in browser.current_url, what="explorer opened")
        wait_for(lambda: "Done" in find(browser, STATUS).text, what="preset run served")


# ---- what the screen says is what the run is ---------------------------------------------

# Four linear seeds whose leader changes: another seed leads the first frames, seed 1 is
# best at the end.
LEADER_CHANGES = (
    "model=linear&k=2&sparsity=0.5&hidden=2&inputs=1&steps=400&batch=64&seeds=4"
    "&snapshot_every=10&seed=207"
)


@pytest.fixture
def gated_server(tmp_path, gate):
    """A server whose one worker holds jobs at their gate (`tests.gate`), and its queue."""
    with gated_app_server(tmp_path / "jobs") as served:
        yield served


def test_streamed_view_is_the_final_view_and_the_best_seed_follows(gated_server, gate, browser):
    from tempsup import figures

    server, store = gated_server
    config = config_of(LEADER_CHANGES)
    # the job stops at chosen frames while it streams: what the page draws there is noted
    streamed: dict[tuple[int, int], dict] = {}
    gate.hold(config.key, after=3)
    browser.get(f"{server}/?{LEADER_CHANGES}")
    for after in (3, 12, 25):
        if after > 3:
            gate.move_on(config.key, after)
        gate.wait_held(config.key)
        held = int((gate.directory / f"{config.key}.held").read_text())
        shot = wait_for(
            lambda n=held: f"frame {n} of " in (s := screen(browser))["label"] and s,
            what=f"frame {held} drawn while the job is held",
        )
        assert "Done" not in status_text(browser)
        seed = int(shot["label"].split("· seed ")[1].split(":")[0])
        streamed[(seed, held - 1)] = shot
    gate.open(config.key)
    wait_for(lambda: "Done" in status_text(browser), what="the job finished")
    run = store.run(config.key)
    assert run is not None and run.best == 1
    # the job ended: the best seed is on screen, not the one that led the first frames
    wait_for(lambda: shown_seed(browser) == run.best, what="the best seed after training")
    assert streamed, "no frame was seen while streaming"
    # each streamed frame = the same frame of the final view, for the same seed: the status
    # line word for word, and every trace that moves with the frame
    seed = next(iter(streamed))[0]
    if seed != run.best:
        pick_seed(browser, seed)
    for (s_, f), shot in sorted(streamed.items()):
        if s_ != seed:
            continue
        go_to_frame(browser, f)
        final = wait_for(lambda: screen(browser), what="the frame drawn")
        # (the frame count grew meanwhile: "frame 3 of 3" then "frame 3 of 41")
        assert without_total(shot["label"]) == without_total(final["label"]), f
        for panel in PANEL_GRAPHS:
            for i in figures.moving_traces(panel, run, seed):
                assert comparable(panel, shot[panel][i]) == comparable(panel, final[panel][i]), (
                    f,
                    panel,
                    i,
                )


def test_status_line_follows_the_scrubber(server, browser, store):
    from tempsup.figures import status_line

    link = TINY + "&seed=31"
    browser.get(f"{server}/?{link}")
    wait_for(lambda: "Done" in status_text(browser), what="done")
    run = store.run(config_of(link).key)
    # the finished run's view on screen (its last frame), and the seed it shows
    n = run.n_frames
    settled(lambda: frame_count(browser) == (n, n) and frame_label(browser), what="the run shown")
    seed = shown_seed(browser)
    for frame in (5, 0, run.n_frames - 1):
        go_to_frame(browser, frame)
        step = int(run["step"][frame])
        expected = f"frame {frame + 1} of {run.n_frames} (step {step}) · " + status_line(
            run, seed, frame
        )
        wait_for(lambda e=expected: frame_label(browser) == e, what=f"the line of frame {frame}")
        # the eigen panel says the same ρ(W_h) at that frame
        rho = expected.split("ρ(W_h) = ")[1].split(" ")[0]
        wait_for(
            lambda r=rho: f"ρ(W<sub>h</sub>) = {r} " in screen(browser)["eigen"][-1]["text"][0],
            what=f"ρ(W_h) = {rho} in the eigen panel's corner at frame {frame}",
        )
    assert status_line(run, seed, 5) != status_line(run, seed, -1)


def test_share_link_restores_seed_and_frame_in_a_fresh_browser(server, browser, tmp_path):
    link = TINY + "&seed=32"
    browser.get(f"{server}/?{link}")
    wait_for(lambda: "Done" in status_text(browser), what="done")
    other = 1 - shown_seed(browser)  # two seeds: pick the one that is not shown
    pick_seed(browser, other)
    go_to_frame(browser, 7)
    wanted = without_total(frame_label(browser))
    browser.execute_cdp_cmd(
        "Browser.grantPermissions",
        {"origin": server, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    # the link follows the view (its own callback, after the frame is drawn)
    href = wait_for(
        lambda: (
            (h := find(browser, "#share-link").get_attribute("href"))
            and (q := parse_qs(urlparse(h).query)).get("view_seed") == [str(other)]
            and q.get("frame") == ["8"]
            and h
        ),
        what=f"the share link at seed {other}, frame 8",
    )
    click(browser, "#share-link")
    wait_for(lambda: find(browser, "#share-feedback").text == "copied", what="copied feedback")
    # a fresh browser (no local storage, nothing cached in the page) shows the same view
    with driver_session(tmp_path / "fresh") as fresh:
        fresh.get(href)
        wait_for(lambda: "Done" in status_text(fresh), what="served in the fresh browser")
        wait_for(lambda: without_total(frame_label(fresh)) == wanted, what="seed and frame")


def test_enter_commits_a_number_box_and_a_refused_value_says_so(server, browser):
    from tempsup.errors import TempsupError

    open_page(browser, f"{server}/?{TINY}&seed=33")
    wait_for(lambda: query(browser).get("hidden") == ["2"], what="the link's config")
    box = find(browser, "#ctl-hidden-box")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("3", Keys.ENTER)  # Enter, no Tab: the box keeps the focus
    wait_for(lambda: query(browser).get("hidden") == ["3"], what="hidden=3 in the URL")
    wait_for(lambda: slider_value(browser, "ctl-hidden") == "3", what="the slider follows the box")
    # beyond the slider but within RunConfig's limits (as a link): applied
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("50", Keys.ENTER)
    wait_for(lambda: query(browser).get("hidden") == ["50"], what="hidden=50 in the URL")
    # beyond RunConfig's limits: refused in RunConfig's words, and the box shows what is kept
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("5000", Keys.ENTER)
    with pytest.raises(TempsupError) as refused:
        DEFAULTS.replace(hidden=5000)
    error = wait_for(lambda: find(browser, "#config-error").text, what="a message")
    assert str(refused.value) in error and "kept hidden = 50" in error, error
    wait_for(lambda: find(browser, "#ctl-hidden-box").get_attribute("value") == "50", what="50")
    assert query(browser).get("hidden") == ["50"]


# (box, typed, field, the value the box sends): each was "enter a value" or dropped silently
REFUSED = [
    ("#ctl-lr", "0", "lr", 0),
    ("#ctl-importance", "2", "importance", 2),
    ("#ctl-snapshot-every", "0", "snapshot_every", 0),
    ("#ctl-curriculum", "1.5", "curriculum", 1.5),
    ("#ctl-k-box", "50", "k", 50),
]


def test_a_refused_value_names_field_value_and_range(server, browser):
    from tempsup.errors import TempsupError

    open_page(browser, f"{server}/?{TINY}&seed=34")
    wait_for(lambda: query(browser).get("model") == ["linear"], what="the link's config")
    click(browser, ".advanced summary")
    for box, typed, field, value in REFUSED:
        el = find(browser, box)
        before = el.get_attribute("value")
        el.send_keys(Keys.CONTROL, "a")
        el.send_keys(typed, Keys.ENTER)
        with pytest.raises(TempsupError) as refused:
            config_of(TINY + "&seed=34").replace(**{field: value})
        # RunConfig's own message (field, value, allowed range), and the box shows what is kept
        wanted = f"Not applied: {refused.value}"
        wait_for(lambda w=wanted: w in find(browser, "#config-error").text, what=wanted)
        wait_for(lambda b=box, v=before: find(browser, b).get_attribute("value") == v, what=box)
        assert query(browser).get(field) != [typed]


def test_compare_names_a_bad_link(server, browser):
    open_page(browser, f"{server}/compare")
    left = find(browser, "#compare-left")
    wait_for(lambda: left.get_attribute("value"), what="the boxes show the runs compared")
    left.send_keys(Keys.CONTROL, "a")
    left.send_keys("not a link", Keys.TAB)
    right = find(browser, "#compare-right")
    right.send_keys(Keys.CONTROL, "a")
    right.send_keys("?model=ssm&k=50", Keys.TAB)
    click(browser, "#compare-go")
    error = wait_for(lambda: find(browser, "#compare-error").text, what="a message")
    assert "left:" in error and "names no setting" in error, error
    assert "right: k: expected an integer in [0, 19], got 50" in error, error


def slider_value(driver, slider_id: str) -> str | None:
    thumb = driver.find_element("css selector", f"#{slider_id} [role='slider']")
    return thumb.get_attribute("aria-valuenow")


def in_view(driver, css: str) -> bool:
    """The element is drawn entirely inside the viewport (and not hidden under another)."""
    return driver.execute_script(
        """
        const el = document.querySelector(arguments[0]);
        if (!el) return false;
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) return false;
        // 1 px for sub-pixel layout: scrollIntoView can leave the bottom edge at 720.09 of 720
        if (r.top < -1 || r.left < -1 || r.bottom > innerHeight + 1 || r.right > innerWidth + 1)
            return false;
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return hit !== null && (el === hit || el.contains(hit) || hit.contains(el));
        """,
        css,
    )


def out_of_view(driver, parts: tuple[str, ...]) -> list[str]:
    """Those of `parts` (CSS selectors) not wholly in view."""
    return [part for part in parts if not in_view(driver, part)]


PLAYER = (PLAY, PREV, NEXT, FRAME, LABEL)


# the panels in one column, scrolling (from 1200 px wide all four fit the window, beside
# the side column: tests/test_explorer_layout_browser.py)
@pytest.mark.parametrize("size", [(1024, 720), (1180, 1080)])
def test_train_and_the_player_stay_in_view_while_the_panels_scroll(server, browser, size):
    set_viewport(browser, *size)
    browser.get(f"{server}/?{TINY}&seed=41")
    wait_for(lambda: "Done" in status_text(browser), what="job done")
    wait_for(lambda: in_view(browser, TRAIN), what="Train above the fold")
    for bottom in (PANEL_GRAPHS["eigen"], "#explain-eigen"):  # scroll down to the last panel
        browser.execute_script(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'end'})", bottom
        )
        wait_for(lambda b=bottom: in_view(browser, b), what=f"{bottom} scrolled into view")
        assert browser.execute_script("return window.scrollY") > 300
        wait_for(
            lambda: not out_of_view(browser, (TRAIN, *PLAYER)),
            what=f"Train and the player in view with {bottom} in view",
        )
    # the sticky player still works: a step changes the frame on screen
    cur, _ = frame_count(browser)
    click(browser, PREV)
    wait_for(lambda: frame_count(browser)[0] == cur - 1, what="the step from the sticky player")


COMPARE_PLAYER = (
    *(css(ids.player(p, ids.COMPARE)) for p in (ids.PLAY, ids.PREV, ids.NEXT, ids.FRAME)),
    "#compare-label",
)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_the_compare_player_stays_in_view_while_the_panels_scroll(server, browser, size):
    from urllib.parse import urlencode

    set_viewport(browser, *size)
    left, right = TINY + "&seed=43", TINY.replace("model=linear", "model=ssm") + "&seed=43"
    browser.get(f"{server}/compare?" + urlencode({"left": left, "right": right}))
    wait_for(lambda: frame_label_compare(browser).count("frame 21 of 21") == 2, what="both runs")
    last = css(ids.compare_graph("right", "eigen"))

    def scrolled_to_last() -> bool:  # ("end" may leave it a fraction of a pixel below)
        browser.execute_script(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", last
        )
        return in_view(browser, last)

    wait_for(scrolled_to_last, what="the last panel scrolled into view")
    assert browser.execute_script("return window.scrollY") > 300
    wait_for(lambda: not out_of_view(browser, COMPARE_PLAYER), what="the player in view")

    # the sticky player still works: steps back (1 % of training each), one at a time,
    # leave the last frames
    while frame_label_compare(browser).count("frame 21 of 21"):
        at = compare_scrubber(browser)
        assert at > 0, "back at the start, and a side still shows its last frame"
        click(browser, COMPARE_PLAYER[1])
        wait_for(lambda a=at: compare_scrubber(browser) == a - 1, what=f"the scrubber at {at - 1}")


def test_the_directions_caption_follows_the_model(server, browser):
    """The explanation behind "Why?" is the model's (read whole while closed: textContent),
    and the disclosure opens from its summary to show it."""
    browser.get(f"{server}/?{TINY}&seed=42")
    why = css(ids.why("directions"))  # found anew on each look: the page redraws it

    def hidden_text() -> str:
        return find(browser, why).get_attribute("textContent") or ""

    wait_for(lambda: "w_s = W_h^s W_x" in hidden_text(), what="the linear caption")
    assert "no free half-space" in hidden_text()
    click(browser, "#ctl-model input[value='rnn']")
    wait_for(lambda: "rectified impulse response" in hidden_text(), what="the ReLU RNN caption")
    text = hidden_text()
    assert "invisible to the readout if it arrives alone" in text
    assert "W_h^s W_x (the ReLU" in text  # named only to say it is not that
    assert "rectified impulse response" not in text_of(browser, css(ids.explain("directions")))
    click(browser, f"{css(ids.explain('directions'))} summary")  # "Why?" opened
    wait_for(lambda: "rectified impulse response" in text_of(browser, why), what="Why? open")


@pytest.mark.parametrize("width", [1280, 1024])  # the 2 × 2 grid (drawn compact), one column
def test_every_panel_fits_in_its_declared_margins(server, browser, width):
    """Each panel's margins hold its axes' labels and its legend at the explorer's usual
    widths. Where they do not, Plotly's automargin widens them and then draws the whole
    panel a second time (the loss panel did: 50 ms of a shared link's first draw)."""
    set_viewport(browser, width, 1400)
    for link in (query_string(DEFAULTS), f"?{TINY}&seed=7", f"?{TINY}&model=rnn&inputs=3"):
        browser.get(server + "/" + link)
        wait_for(lambda: "Done" in status_text(browser), what=f"{link} trained")
        drawn = settled(  # Plotly widens a margin with a second draw: after it, if it does
            lambda: browser.execute_script(
                """
                const out = {};
                for (const [panel, graph] of Object.entries(arguments[0])) {
                  const g = document.querySelector(graph + ' .js-plotly-plot');
                  if (!g || !g._fullLayout || !(g.data || []).length) return null;
                  const fl = g._fullLayout;
                  out[panel] = {declared: fl.margin, used: fl._size, width: fl.width};
                }
                return out;
                """,
                PANEL_GRAPHS,
            ),
            what="every panel drawn, and drawn again if it does so",
        )
        for panel, m in drawn.items():
            pushed = {s: m["used"][s] for s in "lrtb" if abs(m["used"][s] - m["declared"][s]) > 1}
            assert not pushed, f"{link}: {panel} ({m['width']:.0f} px) widened to {pushed}"


def test_a_shared_link_with_its_run_does_not_scroll_sideways_on_a_phone(server, browser):
    """With a run on screen the seed menu is wide and pushes the feature menu to the
    right edge; nothing of it (Dash's hidden focus box included) may reach past it."""
    set_viewport(browser, 390, 844)
    browser.get(f"{server}/?model=ssm&k=3&hidden=2&inputs=1&seed=6&steps=400&view_seed=1&frame=5")
    wait_for(lambda: "Done" in status_text(browser), what="done")
    wait_for(lambda: "frame 5 of " in frame_label(browser), what="the link's frame")
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390 px"
