"""The inventory of a generated 256-disk host (bench/bigtree.py): a rescan updates changed cells in place."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from mdtui.ui.app import MdtuiApp
from mdtui.ui.inventory.widgets import DiskTable

from .conftest import THEME_DIRS, settle

DISKS = 256


@pytest.fixture()
def tree(bigtree: ModuleType) -> Iterator[object]:
    directory = bigtree.scratch_directory()
    try:
        yield bigtree.build(directory, DISKS)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def rows(table: DiskTable) -> list[list[str]]:
    return [[cell.plain for cell in table.get_row_at(index)] for index in range(table.row_count)]


async def shown_rows(root: Path, db: Path) -> list[list[str]]:
    app = MdtuiApp(str(root), privileged=True, theme_dirs=THEME_DIRS, db_path=db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        return rows(app.screen.query_one("#disks", DiskTable))


async def test_a_rescan_updates_the_changed_cells_as_a_fresh_scan_shows_them(tree, tmp_path: Path) -> None:
    free = next(disk for disk in tree.disks if disk.holder is None and disk.transport == "sas")
    app = MdtuiApp(str(tree.base), privileged=True, theme_dirs=THEME_DIRS, db_path=tmp_path / "results.db")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#disks", DiskTable)
        await pilot.press("down", "down", "down")
        before = rows(table)
        cursor = table.cursor_row
        assert len(before) == DISKS
        rebuilt = []
        original_clear = table.clear
        table.clear = lambda *args, **kwargs: rebuilt.append(1) or original_clear(*args, **kwargs)  # type: ignore[method-assign]
        # A free disk's SAS link retrains at 6 Gbit, then the user rescans: one cell changes, in place.
        phy = next(Path(tree.base).glob(f"sys/devices/**/end_device-*/target*/*/block/{free.name}")).parents[4]
        rate = next(phy.glob("phy-*/sas_phy/phy-*/negotiated_linkrate"))
        rate.write_text("6.0 Gbit\n")
        await pilot.press("r")
        await settle(pilot)
        after = rows(table)
        assert not rebuilt, "the table was rebuilt for one changed cell"
        assert table.cursor_row == cursor
        changed = [index for index, (old, new) in enumerate(zip(before, after, strict=True)) if old != new]
        assert [after[index][0] for index in changed] == [free.name], changed
        assert "6 Gbit" in after[changed[0]][4], after[changed[0]]
        # A filesystem made on it widens its state cell past the column: the table is rebuilt instead.
        record = tree.base / "run" / "udev" / "data" / f"b{free.major_minor}"
        record.write_text(record.read_text() + "E:ID_FS_TYPE=xfs\nE:ID_FS_LABEL=scratch\n")
        await pilot.press("r")
        await settle(pilot)
        after = rows(table)
        assert rebuilt
    assert next(row for row in after if row[0] == free.name)[-1] == "filesystem-signature"
    assert after == await shown_rows(tree.base, tmp_path / "fresh.db")
