"""Theme files and the pure cell/detail renderers, without running the app."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mdtui.model.array import ArrayMember, MdArray, SyncStatus
from mdtui.model.disk import Disk, InUseKind, InUseReason, Transport
from mdtui.model.link import Link, LinkKind
from mdtui.ui.app import MdtuiApp
from mdtui.ui.common.render import (
    Palette,
    array_cells,
    array_detail,
    disk_detail,
    disk_state,
    link_label,
    members_summary,
    sync_summary,
    truncate,
)
from mdtui.ui.themes import DEFAULT_THEME, load_themes, parse_theme, repo_themes_dir, user_themes_dir

from .conftest import plain, settle

# -- themes ----------------------------------------------------------------------------------------


def test_shipped_themes_load_dark_default_and_light() -> None:
    loaded = load_themes([repo_themes_dir()])
    assert loaded.problems == ()
    themes = {theme.name: theme for theme in loaded.themes}
    assert themes[DEFAULT_THEME].dark
    assert not themes["mdtui-light"].dark


def test_user_theme_overrides_and_bad_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "mdtui-dark.tcss").write_text("/* mine */\n$primary: #FF0000;\n$my-accent: #00FF00;\n")
    (tmp_path / "broken.tcss").write_text("$primary: not-a-colour;\n")
    loaded = load_themes([repo_themes_dir(), tmp_path])
    themes = {theme.name: theme for theme in loaded.themes}
    assert themes["mdtui-dark"].primary == "#FF0000"
    assert themes["mdtui-dark"].variables == {"my-accent": "#00FF00"}
    assert "broken" not in themes
    assert len(loaded.problems) == 1 and "broken.tcss" in loaded.problems[0]


def test_parse_theme_needs_primary() -> None:
    with pytest.raises(ValueError, match="primary"):
        parse_theme("$background: #000000;", "x")


def test_user_themes_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert user_themes_dir() == tmp_path / "mdtui" / "themes"


async def test_app_registers_themes_and_switches(make_app: Callable[..., MdtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.theme == DEFAULT_THEME
        app.theme = "mdtui-light"
        await pilot.pause()
        assert app.current_theme.dark is False


# -- renderers -------------------------------------------------------------------------------------

PALETTE = Palette()


def make_disk(**changes: object) -> Disk:
    fields: dict[str, object] = {"name": "sdx", "dev_path": "/dev/sdx", "transport": Transport.SATA}
    fields.update(changes)
    return Disk(**fields)  # type: ignore[arg-type]


def test_disk_state_words() -> None:
    assert disk_state(make_disk()) == "free"
    assert disk_state(make_disk(problems=("size unreadable",))) == "unknown"
    reasons = (InUseReason(InUseKind.SWAP, "active swap"), InUseReason(InUseKind.MOUNTED, "mounted at /srv"))
    assert disk_state(make_disk(in_use=reasons, problems=("x",))) == "swap +1"


def test_link_labels() -> None:
    assert link_label(None) == "-"
    assert link_label(Link(LinkKind.PCIE, 16.0, 16.0, 4, 4)) == "Gen4 x4"
    assert link_label(Link(LinkKind.PCIE, 6.0, 6.0, 2, 2)) == "6 GT/s x2"
    assert link_label(Link(LinkKind.SATA, 3.0, 6.0)) == "3 Gbps"


def test_truncate_marks_the_cut() -> None:
    assert truncate("Samsung SSD", 20) == "Samsung SSD"
    assert truncate("Samsung SSD 980 PRO", 8) == "Samsung…"
    assert truncate("anything", 0) == ""


def test_disk_detail_names_downgraded_sata_link_and_every_reason() -> None:
    link = Link(LinkKind.SATA, 3.0, 6.0)
    reasons = (InUseReason(InUseKind.MD_MEMBER, "active member of md0"), InUseReason(InUseKind.HOLDER, "held by dm-0"))
    text = plain(disk_detail(make_disk(link=link, in_use=reasons), PALETTE))
    assert "⚠ downgraded" in text
    assert link.finding() in text  # type: ignore[operator]
    assert "md-member: active member of md0" in text and "holder: held by dm-0" in text


def test_array_cells_and_detail() -> None:
    array = MdArray(
        name="md5",
        state="clean",
        level="raid5",
        raid_disks=3,
        members=(
            ArrayMember("sda", 0, ("in_sync",)),
            ArrayMember("sdb", 1, ("in_sync",)),
            ArrayMember("sdc", None, ("faulty",)),
            ArrayMember("sdd", None, ("spare",)),
        ),
        degraded=1,
        sync=SyncStatus("recover", done_sectors=50, total_sectors=200, speed_bytes_per_s=120_000_000, eta_seconds=90),
    )
    assert members_summary(array) == "2/3 +1S 1F"
    assert sync_summary(array.sync) == "recover 25.0%"
    assert sync_summary(SyncStatus("resync", state="delayed")) == "resync delayed"
    assert plain(array_cells(array, PALETTE)[2]).strip() == "✗ clean, degraded 1"
    text = plain(array_detail(array, PALETTE))
    assert "120 MB/s" in text and "ETA 1m30s" in text
    assert "faulty" in text and "spare" in text and "slot 1" in text
