"""The help screen: keys, what the columns mean, in-use rules, link findings, create and teardown."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Markdown

HELP_TEXT = """\
## Everywhere

- **?** this help, for the screen you are on (type to search it); **q** or **Ctrl+C** quits (asking first
  while a benchmark or a sweep runs); **t** picks a theme
  (remembered in `~/.config/mdtui/config.json`)
- **Ctrl+P** the command palette: type *bench*, *watch*, *results*, *create*, *tune*, *persist*,
  *scrub*, *repair*, *export*, *theme*, *findings* (or *advise*, *experiment*), *doctor*, *calibrate* or a
  preset's name to open a screen or start an action
- **g** the guided setup (also in the palette: *guide*)
- In every table: **↑ ↓ PgUp PgDn**, **Home** / **End** first and last row (**G** last too), **j** / **k**
  down and up; no screen uses these keys for anything else (a key means one thing on a screen)
- In the inventory and the results list: **s** sorts by the next column (▲ in its header), **S** reverses,
  a click on a header sorts by it; **/** filters the rows as you type, **Enter** keeps the filter,
  **Escape** clears it (a second **Escape** goes back)
- While a benchmark or a sweep runs, **Escape** and **q** ask first: stop it, keep it running in the
  background (the palette brings it back), or stay

## Inventory

Two tables, **Disks** (whole block devices) and **Arrays** (md arrays the kernel knows), over a
**Detail** pane with every field of the selected row.

### Inventory keys

- **Tab** / **Shift+Tab** go to the next / previous pane
- **Enter** opens the selected row's detail full screen; an array's keys (**a p v f x**) work in it too
- **r** scans again and keeps the selection; **n** hides or shows the notes banner
- **c** plans and creates an array; **x** tears down the selected array (Arrays pane)
- **w** watches the selected array live (or the first one; all disks when there is none)
- **b** benchmarks the selected array or disk (presets from the field findings in docs/findings.md, live chart)
- **u** shows the selected array's knobs (md, its queue, its members, the resync limits; `mdtui tune`)
- **h** opens the results history (stored benchmark runs) to compare and export
- **F** the findings: what limits the arrays, each with its evidence, why, what to do and its experiment
  (on an array, its own first)
- With an array highlighted: **a** sets alerts (mdadm's monitor: mail or a program, then a test alert),
  **p** persists it (mdadm.conf, then the initramfs), **v** scrubs it (verifies: a check; a repair is typed through),
  **f** repairs it (fail, remove, add, replace, re-add a member), **e** grows it (a member more, another level,
  chunk or layout, `--size max`, a shrink, the filesystem after, a resume); each shows its plan and asks first
- **/** filters the focused table, **s** / **S** sort it (see *Everywhere*)

### Disk columns

- **Disk**: kernel name (`nvme0n1`, `sda`). **Bus**: nvme, sata, sas, virtio, usb, loop, other.
- **Size**: capacity in IEC units (1 GiB = 1024³ bytes).
- **Type**: SSD or HDD from the kernel's rotational flag; `?` when unknown.
- **Link**: the link as it trained now (PCIe generation and lanes, SATA Gbps, SAS Gbit);
  **⚠** when it trained below its maximum.
- **Model / serial**: cut short on narrow terminals; in full in the detail pane.
- **State**: **free**, the first **in-use reason** (`+N` more in the detail), or **unknown**.

### In-use rules

A disk is offered for a new array only when it is **free**: nothing uses it and everything
needed to tell was read. Any one of these makes it *in use*:

- **root-filesystem**: it (or a partition, LV or array on it) holds `/`
- **mounted**: a filesystem on it is mounted
- **swap**: active swap on it, or a swap signature
- **md-member**: it is a member of an assembled md array
- **md-superblock**: it carries the md superblock of an array that is not assembled
- **holder**: another device (device-mapper, LVM, bcache…) is built on it
- **lvm-pv**: it is an LVM physical volume
- **filesystem-signature**: a filesystem signature is on it or on a partition
- **partition-table**: it has a partition table or partitions
- **open-exclusive**: a program holds it open exclusively (checked as root only)

**unknown** means something could not be read (see *Problems* in the detail pane), such as
signatures without root or a udev database. mdtui never offers such a disk blindly.

### Link findings

A stripe runs at *slowest member × members*. The detail pane shows the link as it trained *now*
and the *maximum* the device (PCIe) or port (SATA, SAS) supports, each with its usable bandwidth
in decimal MB/s after line encoding (8b/10b for PCIe Gen1–2, SATA, and SAS up to 12 Gbit;
128b/130b from PCIe Gen3; 128b/150b for 22.5 Gbit SAS). When a link trained slower or narrower
than its maximum, a **⚠ Finding** says so in a sentence: one drive in a PCIe Gen1 slot reads at
half the speed of its neighbours and drags the whole array down. For PCIe, the slot's own maximum
is named when the slot is the limit.

### Array columns

- **Level**: raid0, raid1, raid4/5/6, raid10, linear; `-` when inactive.
- **State**: the kernel's array state, plus **degraded N** when N members are missing.
- **Members**: in-sync members of the raid disks, `+NS` spares, `NF` faulty.
- **Sync**: resync, recover, check, repair or reshape with progress; speed and ETA in the detail.
- **Chunk**, **Layout**: stripe geometry as mdadm names it (left to the detail pane when narrow).

## Create

**c** opens the create form. The member list shows every disk: **space** makes a free disk a
member, **s** a spare; busy disks are greyed with their reason and cannot be picked. Level, chunk,
layout, metadata, bitmap, name, *assume clean* and *build* offer only what fits the level and
member count. The plan preview on the right updates as you go: the exact `mdadm` command, usable
size, fault tolerance, predicted read and write, the small-write penalty, mkfs alignment and
warnings, or the problems to fix first. **Ctrl+S** opens the confirmation, which names every disk
that will be overwritten (by-id path and serial) and creates only after you type the array device
(e.g. `/dev/md0`). **Escape** cancels at any point and runs nothing.

After creation the resync view follows the resync (progress, speed, ETA beside the predicted time,
and what holds it now). Benchmarks during a resync mislead; **f** boosts it: the cost to other I/O is
shown first and you type the array's name; md's sync_speed_min/max go back when the resync ends, on
**f** again, when you leave the view, or at the next start if mdtui was killed.

## Teardown

**x** on an array mdtui created stops it and wipes its members (`mdadm --stop`,
`--zero-superblock`, `wipefs --all`) after you type its device. mdtui refuses arrays it did not
create and mounted arrays.

## Watch

**w** (or `mdtui watch [ARRAY] [--interval S]`) samples every second (0.25 s allowed). Top: the
array's read and write in MB/s and IOPS over the last two minutes. **Members**: each member's MB/s,
requests/s, **Busy** (time with I/O in flight, as iostat's %util), queue depth and ms per request; a
member much busier or slower than its peers is drawn in the warning colour with **⚠** and the reason
(a stripe runs at its slowest member's pace). The pane title sets the members' traffic against the
array's and what a clean array of this level implies (reads 1×; writes 2× on raid1, n/(n-2) on raid6).
**CPU**: load and iowait, governor (⚠ powersave), intel_pstate/amd_pstate mode and EPP, GHz per core
(a chart on tall terminals), md kernel-thread CPU (`md0_raid6`, `md0_resync`). Without cpufreq (most
VMs) it says *not available* instead of showing zeros. Keys: **a** next array (then all disks),
**i** MB/s ↔ IOPS chart (narrow terminals), **p** pause the display, **Escape** back. The member table
lists the busiest first and scrolls: **↑↓** (**j**), **PgUp PgDn**, **Home End**, the wheel; **s** sorts
by the next column (busy, read, write, ms per request, name), **S** reverses. A member that stands out
stays on top whatever the scroll or order; the title says which rows show ("1-6 of 256").

## Benchmark

**b** opens the benchmark screen on the selected array or disk. Pick a preset (its paragraph says
what it measures and which field result it reproduces), the target and **Quick** (short steps: a
first look in about a minute); the custom preset adds pattern, block size, queue depth (QD), jobs and
seconds. The plan below says how long it runs, whether it writes, and why it would refuse. **Ctrl+S**
starts: a read-only preset runs at once; one that writes runs only after you type the target's device,
and never on a mounted or in-use disk or a mounted array (checked again right before it starts).
While it runs: the step, MB/s, IOPS, elapsed and remaining time, and a chart of throughput (left
axis) and IOPS (right); **x** or **Escape** cancels and keeps the figures so far, marked cancelled.
At the end: a row per step (read, write, IOPS, md kernel-thread CPU), the weakest-link findings
(slowest member, array vs slowest × N and vs the members' sum) and the stored run IDs (**h** lists
them). **n** starts a new run. Same engine: `mdtui bench --list`, `mdtui bench --preset NAME --target DEV`.

## Results

**h** lists every stored run, newest first: status (**interrupted** when its process died mid-run),
preset, target, level/chunk, read/write MB/s, IOPS and label; narrow terminals show the rest of the
highlighted run on the line below. **/** filters as you type: words match target, preset or label;
`target:md1`, `preset:sweep`, `label:`, `status:`, `level:` look in one field. **space** marks runs,
**b** makes the highlighted one the baseline (else the first marked), **c** compares: what changed
between the runs comes first, then the chosen metric with each run's ratio to the baseline and a bar
(green better, red worse by the metric's direction; ±2% is the same), then a table per metric. In the
comparison **m** / **M** pick the metric, **v** the normalised view (a sweep ÷ (one raw disk's figure
× data disks), as in the chunk study; **d** picks that raw-disk run), **e** exports it. On the list:
**Enter** shows everything stored about a run, **l** / **n** edit its label / note, **e** exports the
marked runs (or all shown) as Markdown, CSV or JSON to a file in the current directory, **d** deletes
a run after you type its number, **r** reloads. The database is `$MDTUI_DB`, else
`~/.local/share/mdtui/results.db` (as `mdtui results`).

## Guided setup and advice

**g** walks through building an array for a purpose (VM images, backups, database, scratch):
pick free disks; see the findings about their links, the CPU governor and the geometry the
purpose calls for (each with its numbers, the measured effect behind it, and what to do); open
the create form filled in with a draft; follow the resync; run the weakest-link preset; run one
experiment (the read-only parallelism sweep, or the governor A/B, which overwrites the array
and asks you to type its device); read the summary. **s** skips a step, **n** goes on,
**Escape** closes (or stops a running benchmark). It opens by itself the first time mdtui runs
with no stored results. `mdtui advise` prints the same findings for the whole system.

## Findings

**F** on the inventory (on an array: its own findings; **a** switches to the whole host's and back), or
*findings*, *advise* or *experiment* in the palette: every finding `mdtui advise` makes, worst first, each
line with its severity in words. Below, the selected one: its evidence, why it matters, what it rules out,
what to do, and its experiment with the command that runs it. **b** opens the bench screen with that
experiment's preset on its array (weakest-link, parity-cost); **r** looks again; **Escape** goes back. An
array's detail names what limits its speed (**Limit**), its other findings, and those about the whole host.
*doctor* and *calibrate* in the palette show what `mdtui doctor` and `mdtui calibrate --dry-run` print.

## Read-only mode

Without root, mdtui cannot check filesystem signatures (without udev), exclusive opens or md
superblocks, and cannot create or benchmark anything that writes. The banner says what is missing.

## Knobs

**u** shows the selected array's knobs: md's own (stripe cache, sync limits), its queue's (read-ahead,
scheduler, nr_requests) and its members'. **r** reads them again; **s** sweeps one knob with a read-only
benchmark per value and puts the old value back; **Escape** goes back (or stops a sweep, after asking).
"""


# The help section for each screen, by the screen's class name; any other screen opens at the inventory's.
TOPICS = {
    "InventoryScreen": "Inventory",
    "CreateScreen": "Create",
    "GuideCreateScreen": "Create",
    "ResyncScreen": "Create",
    "WatchScreen": "Watch",
    "BenchScreen": "Benchmark",
    "ResultsScreen": "Results",
    "CompareScreen": "Results",
    "GuideScreen": "Guided setup and advice",
    "TuneScreen": "Knobs",
    "FindingsScreen": "Findings",
}


def sections(text: str = HELP_TEXT) -> dict[str, str]:
    """Each `## ` section's text (its heading included), by title, in order."""
    found: dict[str, str] = {}
    title = ""
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            title = line[3:].strip()
        found[title] = found.get(title, "") + line
    return found


def help_for(screen_name: str, query: str = "") -> str:
    """The help for a screen: its own section first, then what works everywhere, then the rest.

    With ``query``: only the bullets and paragraphs holding every word typed (case ignored), under
    their headings; a sentence when none does.
    """
    parts = sections()
    topic = TOPICS.get(screen_name, "Inventory")
    order = [topic, "Everywhere", *(title for title in parts if title not in (topic, "Everywhere"))]
    text = "".join(parts[title] for title in order if title in parts)
    words = query.lower().split()
    if not words:
        return text
    kept: list[str] = []
    heading = ""
    for item_heading, item in _items(text):
        if all(word in item.lower() for word in words):
            if item_heading != heading:
                heading = item_heading
                kept.extend(("", heading))
            kept.append(item if item.startswith("- ") else f"- {item}")
    if not kept:
        return f"Nothing in the help holds {query.strip()!r}."
    return "\n".join(kept).strip() + "\n"


def _items(text: str) -> list[tuple[str, str]]:
    """(heading, item) for each bullet or paragraph, its wrapped lines joined into one."""
    items: list[tuple[str, str]] = []
    heading, current = "", ""
    for line in [*text.splitlines(), ""]:
        if line.startswith("#") or not line.strip() or line.startswith("- "):
            if current:
                items.append((heading, current))
            current = line if line.startswith("- ") else ""
            if line.startswith("#"):
                heading = line
            continue
        current = f"{current} {line.strip()}" if current else line.strip()
    return items


class HelpScreen(ModalScreen[None]):
    """Help for the screen it was opened from (its section first), with a search line over it: / or any
    letter starts a search; Escape clears it, then closes."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "dismiss", "Close", key_display="?", show=False),
        Binding("q", "dismiss", "Close", show=False),
        Binding("slash", "search", "Search", key_display="/", show=False),
    ]

    def __init__(self, screen_name: str = "InventoryScreen") -> None:
        super().__init__()
        self.screen_name = screen_name

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Input(
                placeholder="/ or a letter searches the help · Esc clears, then closes",
                id="help-search",
                select_on_focus=False,
            )
            with VerticalScroll(id="help-body"):
                yield Markdown(help_for(self.screen_name), id="help-text")

    def on_mount(self) -> None:
        box = self.query_one("#help-box", Vertical)
        box.border_title = f"Help: {TOPICS.get(self.screen_name, 'Inventory')}"
        box.border_subtitle = "type to search · ↓ PgDn scroll · Esc closes"
        self.query_one("#help-body", VerticalScroll).focus()

    @on(Input.Changed, "#help-search")
    def _search(self, event: Input.Changed) -> None:
        self.query_one("#help-text", Markdown).update(help_for(self.screen_name, event.value))
        self.query_one("#help-body", VerticalScroll).scroll_home(animate=False)

    @on(Input.Submitted, "#help-search")
    def _read(self) -> None:
        self.query_one("#help-body", VerticalScroll).focus()

    def on_key(self, event: events.Key) -> None:
        # A letter typed over the help starts a search with it (q and ? close, as they always did).
        search = self.query_one("#help-search", Input)
        if self.focused is search or event.character is None or not event.is_printable:
            return
        if event.character in ("q", "?", "/", " "):
            return
        event.stop()
        search.focus()
        search.insert_text_at_cursor(event.character)

    def action_search(self) -> None:
        self.query_one("#help-search", Input).focus()

    def action_close(self) -> None:
        search = self.query_one("#help-search", Input)
        if search.value:
            search.value = ""
            self.query_one("#help-body", VerticalScroll).focus()
            return
        self.dismiss(None)
