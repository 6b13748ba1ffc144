"""Plain-text tables fitted to a width (mdtui.columns): what goes first, what is cut, and that nothing is lost
when there is no width."""

from __future__ import annotations

from mdtui.columns import Column, cut_start, fit_columns, fit_layouts


def table() -> list[Column]:
    return [
        Column("NAME", ["nvme0n1", "sda"]),
        Column("MODEL", ["SAMSUNG MZQL23T8HCLS / S64HNE0R000000", "ST16000NM"], drop=1),
        Column("SIZE", ["3.5 TiB", "14.6 TiB"], right=True),
        Column("STATE", ["in use: md-member: active member of md1", "free"], least=12, short=["md-member", "free"]),
    ]


def test_no_width_is_every_cell_whole() -> None:
    fitted = fit_columns(table(), None)
    model = "SAMSUNG MZQL23T8HCLS / S64HNE0R000000"
    assert fitted.lines[1] == f"nvme0n1  {model}   3.5 TiB  in use: md-member: active member of md1"
    assert not fitted.cut and not fitted.left_out


def test_cut_first_then_shorter_cells_then_a_column_left_out() -> None:
    whole = len(fit_columns(table(), None).lines[1])
    cut = fit_columns(table(), whole - 10)
    assert cut.lines[1].endswith("active me…") and not cut.left_out
    assert fit_columns(table(), 75).lines[1].endswith("in use: md-membe…")  # cut, but not below 12
    short = fit_columns(table(), 68)  # cutting the state to 12 is not enough: its short form, the model kept
    assert short.lines[1].endswith("md-member") and "S64HNE0R000000" in short.lines[1]
    narrow = fit_columns(table(), 40)
    assert narrow.left_out == ["MODEL"] and narrow.lines[1] == "nvme0n1   3.5 TiB  md-member"
    assert all(len(line) <= 40 for line in narrow.lines) and narrow.cut


def test_nothing_left_to_leave_out_cuts_the_lines() -> None:
    fitted = fit_columns(table(), 20)
    assert fitted.overflow and all(len(line) <= 20 for line in fitted.lines)


def test_layouts_take_the_first_that_fits_and_a_label_keeps_its_end() -> None:
    labels = Column("LABEL", ["numjobs 1", "numjobs 2"], least=6, cut=cut_start)
    wide = [Column("ID", ["1", "2"]), Column("READ MB/s", ["1,000.0", "2,000.0"], right=True), labels]
    narrow = [Column("ID", ["1", "2"]), labels]
    fitted = fit_layouts([wide, narrow], 16)
    assert fitted.lines == ["ID  LABEL", "1   numjobs 1", "2   numjobs 2"] and fitted.left_out == ["READ MB/s"]
    cut = fit_layouts([wide, narrow], 10)
    assert cut.lines[1:] == ["1   …obs 1", "2   …obs 2"]
    assert fit_layouts([wide, narrow], None).lines[1] == "1     1,000.0  numjobs 1"
