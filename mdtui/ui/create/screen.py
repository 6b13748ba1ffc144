"""The create screen: pick members and options that fit the level, watch the plan update, confirm, create."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.widgets import Button, Checkbox, Footer, Header, Input, Label, Select, Static

from mdtui.bench.member_figures import stored_member_runs
from mdtui.bench.sync_forecast import create_time
from mdtui.execute import mdadm as md_run
from mdtui.execute.mdadm import CreateOutcome
from mdtui.execute.record import kernel_release
from mdtui.format import iec_bytes
from mdtui.model.inventory import Inventory
from mdtui.plan.create import CreatePlan
from mdtui.plan.describe import describe_create
from mdtui.plan.sync_time import SyncTime
from mdtui.plan.sync_words import initial_sync_line
from mdtui.probe.mdstat import parse_personalities
from mdtui.probe.root import RefusedFileError, SystemRoot
from mdtui.store.records import RunRecord
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.member_picker import MemberPicker
from mdtui.ui.common.messages import ActionFailed, CreateFinished, failure_reason
from mdtui.ui.common.render import Palette, app_db_path, app_palette
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.common.toggles import MarkCheckbox
from mdtui.ui.create import form as cf
from mdtui.ui.dialogs.confirm import ConfirmScreen

SELECT_IDS = ("level", "chunk", "layout", "metadata", "bitmap", "bitmap-chunk", "policy", "journal")


@dataclass(frozen=True)
class Created:
    """What the create screen hands back after mdadm succeeded."""

    plan: CreatePlan
    outcome: CreateOutcome


def preview_renderable(result: cf.Preview, palette: Palette, initial: SyncTime | None = None) -> Text:
    """The plan as describe_create words it (argv, size, tolerance, prediction, alignment, warnings), or the
    problems. ``initial``: the initial sync mdadm starts, predicted (bench/sync_forecast.create_time)."""
    if result.plan is None:
        text = Text("Cannot create yet; change:\n", style=f"bold {palette.error}")
        for problem in result.problems:
            text.append(f"• {problem}\n", style=palette.error)
        return text
    text = Text()
    lines = describe_create(result.plan)
    if (sync_line := initial_sync_line(initial)) is not None:
        lines.append(sync_line)
    for index, line in enumerate(lines):
        if index == 0 or line.startswith("  mdadm"):
            style = "bold"
        elif line.startswith(("⚠", "resync")) or " has no " in line or " have no " in line:
            style = palette.warning
        elif line.startswith(("note:", "  from", "  note:", "  members:")):
            style = palette.muted
        else:
            style = ""
        text.append(line + "\n", style=style)
    return text


def md_personalities(root: str) -> tuple[str, ...] | None:
    """The personalities /proc/mdstat lists; None when there is none (no md driver)."""
    try:
        text = SystemRoot(root).read_table("/proc/mdstat")
    except RefusedFileError:
        return ()  # there but unreadable: the driver is loaded, its personalities unknown
    return None if text is None else parse_personalities(text)


def driver_text(check: cf.DriverCheck, palette: Palette) -> Text:
    """What the md driver means for this create, said above the plan."""
    text = Text()
    if check.problem:
        text.append(f"✖ {check.problem}\n\n", style=f"bold {palette.error}")
    if check.note:
        text.append(f"⚠ {check.note}\n\n", style=palette.warning)
    return text


def confirm_body(plan: CreatePlan, inventory: Inventory, palette: Palette) -> RenderableType:
    """The exact argv and every disk it overwrites, named by the identity argv uses."""
    req = plan.request
    parts: list[RenderableType] = [
        Text("This runs:", style=palette.muted),
        Text(shlex.join(plan.argv), style="bold"),
        Text(""),
        Text("Everything on these disks is overwritten:", style=f"bold {palette.warning}"),
    ]
    for role, disks in (("member", req.members), ("spare", req.spares)):
        for disk in disks:
            size = iec_bytes(disk.size_bytes) if disk.size_bytes is not None else "size unknown"
            parts.append(Text.assemble(f"  {role:<6}  ", (disk.name, "bold"), f"  {size}  serial {disk.serial or '?'}"))
            parts.append(Text(f"          {disk.by_id_path or disk.dev_path + ' (no by-id link)'}"))
    if plan.resync_expected:
        parts += [Text(""), Text("A resync runs afterwards; benchmarks during it mislead.", style=palette.warning)]
    if not inventory.privileged:
        parts.append(Text("mdtui is not running as root: mdadm will refuse.", style=palette.error))
    return Group(*parts)


class CreateScreen(MdtuiScreen[Created | None]):
    """Dismisses with Created after mdadm succeeded, None when cancelled (nothing ran)."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "create", "Create…"),
    ]

    busy: reactive[bool] = reactive(False, init=False)

    def __init__(self, root: str, inventory: Inventory) -> None:
        super().__init__()
        self.root = root
        self.inventory = inventory
        self.form = cf.CreateForm(
            device=cf.next_free_device(inventory),
            kernel=kernel_release(SystemRoot(root)),
            free_disks=tuple(d.name for d in inventory.disks if not d.in_use and not d.problems),
        )
        self.result = cf.preview(self.form, inventory)  # the stored figures are read once mounted (_sync_widgets)
        self.driver = cf.check_driver(md_personalities(root), self.form)
        self.error: str | None = None
        self._offered: dict[str, tuple[cf.Choice, ...]] = {}
        self._member_run_cache: list[RunRecord] | None = None

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        form = self.form
        offered = cf.choices(form)
        yield Header(icon="▤")
        yield Static(id="create-banner")
        with Horizontal(id="create-body"):
            with VerticalScroll(id="create-form"):
                yield MemberPicker(id="members")
                with Horizontal(classes="field"):
                    yield Label("Device", classes="field-label")
                    yield Input(form.device, id="device", compact=True)
                for select_id, label, options in (
                    ("level", "Level", offered.levels),
                    ("chunk", "Chunk", offered.chunks),
                    ("layout", "Layout", offered.layouts),
                    ("metadata", "Metadata", offered.metadata),
                    ("bitmap", "Bitmap", offered.bitmaps),
                    # The field labels are 9 columns wide: "Bit" for the bitmap's own chunk and file.
                    ("bitmap-chunk", "Bit chunk", offered.bitmap_chunks),
                    ("policy", "Policy", offered.policies),
                    ("journal", "Journal", offered.journals),
                ):
                    with Horizontal(classes="field"):
                        yield Label(label, classes="field-label")
                        yield Select[str](options, id=select_id, allow_blank=False, compact=True)
                    self._offered[select_id] = options
                    if select_id == "bitmap-chunk":
                        with Horizontal(classes="field"):
                            yield Label("Bit file", classes="field-label")
                            yield Input(
                                form.bitmap_file, id="bitmap-file", placeholder="/path (a new file)", compact=True
                            )
                with Horizontal(classes="field"):
                    yield Label("Name", classes="field-label")
                    yield Input(form.name, id="name", placeholder="optional (--name)", compact=True)
                with Horizontal(classes="field"):
                    yield MarkCheckbox("Assume clean", form.assume_clean, id="assume-clean", compact=True)
                    yield MarkCheckbox("Build", form.build, id="build", compact=True)
                with Horizontal(classes="field"):
                    yield MarkCheckbox(cf.MIXED_SIZES_LABEL, form.allow_mixed_sizes, id="mixed-sizes", compact=True)
                yield Button("Create…", id="create", variant="error", compact=True, disabled=True)
            with VerticalScroll(id="create-preview"):
                yield Static(id="preview-body")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.title = "mdtui"
        self.sub_title = f"create an array · root {self.root}"
        self.query_one("#create-preview", VerticalScroll).border_title = "Plan preview"
        self._sync_widgets()
        self.query_one("#members", MemberPicker).focus()

    def palette(self) -> Palette:
        return app_palette(self.app)

    def _member_runs(self) -> list[RunRecord]:
        """The stored member-matrix runs, read once: the preview predicts from them on every change."""
        if self._member_run_cache is None:
            self._member_run_cache = stored_member_runs(app_db_path(self.app))
        return self._member_run_cache

    # -- form ⇄ widgets --------------------------------------------------------------------------

    def _set_form(self, form: cf.CreateForm) -> None:
        if form != self.form:
            self.form = form
            self._sync_widgets()

    def _offer(self, select_id: str, options: tuple[cf.Choice, ...], value: str, enabled: bool) -> None:
        select = self.query_one(f"#{select_id}", Select)
        if self._offered.get(select_id) != options:
            self._offered[select_id] = options
            select.set_options(options)
        if value not in {v for _, v in options}:
            value = options[0][1]
        if select.value != value:
            select.value = value
        select.disabled = not enabled

    def _sync_widgets(self) -> None:
        """Make every widget show what the form allows now, then redraw the preview."""
        form = self.form
        offered = cf.choices(form)
        self._offer("level", offered.levels, form.level, True)
        self._offer("chunk", offered.chunks, str(form.chunk_kib), offered.chunk_enabled)
        self._offer("layout", offered.layouts, cf.current_layout(form) or "", offered.layout_enabled)
        self._offer("metadata", offered.metadata, form.metadata, offered.metadata_enabled)
        self._offer("bitmap", offered.bitmaps, form.bitmap, offered.bitmap_enabled)
        chunk = "" if form.bitmap_chunk_kib is None else str(form.bitmap_chunk_kib)
        self._offer("bitmap-chunk", offered.bitmap_chunks, chunk, offered.bitmap_chunk_enabled)
        self._offer("policy", offered.policies, form.policy, offered.policy_enabled)
        self._offer("journal", offered.journals, form.journal, offered.journal_enabled)
        self.query_one("#bitmap-file", Input).disabled = not offered.bitmap_file_enabled
        self.query_one("#name", Input).disabled = not offered.name_enabled
        for checkbox_id, value, enabled in (
            ("assume-clean", form.assume_clean, offered.assume_clean_enabled),
            ("build", form.build, offered.build_enabled),
            ("mixed-sizes", form.allow_mixed_sizes, offered.mixed_sizes_enabled),
        ):
            checkbox = self.query_one(f"#{checkbox_id}", Checkbox)
            checkbox.value = value and enabled
            checkbox.disabled = not enabled
        picker = self.query_one("#members", MemberPicker)
        picker.show(self.inventory.disks, form.members, form.spares if offered.spares_allowed else ())
        self.result = cf.preview(form, self.inventory, self._member_runs())
        # Read again on every change: a driver loaded meanwhile (modprobe) is seen without reopening.
        self.driver = cf.check_driver(md_personalities(self.root), form)
        self._draw()

    def _draw(self) -> None:
        palette = self.palette()
        plan = self.result.plan
        initial = create_time(SystemRoot(self.root), plan, self._member_runs()) if plan is not None else None
        body = driver_text(self.driver, palette)
        body.append_text(preview_renderable(self.result, palette, initial))
        self.query_one("#preview-body", Static).update(body)
        self.query_one("#create", Button).disabled = not self.can_create or self.busy
        picker = self.query_one("#members", MemberPicker)
        chosen = len(self.form.members)
        free = picker.free_count
        spares = len(self.form.spares) if cf.choices(self.form).spares_allowed else 0
        counts = f"{chosen} chosen" + (f", {spares} spare" if spares else "")
        picker.border_title = f"Members: {counts} of {free} free"
        self._update_banner()

    def _update_banner(self) -> None:
        lines: list[str] = []
        if self.busy:
            lines.append(f"Creating {self.form.device.strip()}… mdadm is running.")
        if self.error:
            lines.append(f"✖ {self.error}")
        if not self.inventory.privileged:
            lines.append("⚠ Not running as root: the plan can be reviewed, but mdadm will refuse to create it.")
        if not any(disk.available for disk in self.inventory.disks):
            lines.append("⚠ No free disks: every disk is in use or could not be checked (reasons in the list).")
        banner = self.query_one("#create-banner", Static)
        banner.update(Text("\n".join(lines)))
        banner.set_class(bool(lines), "-shown")
        banner.set_class(bool(self.error), "-error")

    @property
    def can_create(self) -> bool:
        return self.result.plan is not None and self.driver.problem is None

    def watch_busy(self) -> None:
        self._draw()

    @on(MemberPicker.Toggled)
    def _toggled(self, event: MemberPicker.Toggled) -> None:
        if event.role == "spare":
            offered = cf.choices(self.form)
            if not offered.spares_allowed:
                level = self.form.raid_level.name
                why = "--build has no superblock" if self.form.build else f"{level} has no redundancy"
                self.notify(f"No spares: {why} to rebuild onto a spare.", severity="warning")
                return
            self._set_form(cf.set_spare(self.form, event.disk_name))
        else:
            self._set_form(cf.set_member(self.form, event.disk_name))

    @on(Select.Changed)
    def _selected(self, event: Select.Changed) -> None:
        select = event.select
        # Read the widget, not the message: a queued message may predate the options offered now.
        value = select.value
        if select.disabled or select.id not in SELECT_IDS or not isinstance(value, str):
            return
        if not value and select.id not in ("bitmap-chunk", "journal"):  # there "" is a choice: mdadm's, none yet
            return
        form = self.form
        if select.id == "level":
            form = replace(form, level=value)
        elif select.id == "chunk":
            form = replace(form, chunk_kib=int(value))
        elif select.id == "layout":
            form = replace(form, layout=value)
        elif select.id == "metadata":
            form = replace(form, metadata=value)
        elif select.id == "bitmap":
            form = replace(form, bitmap=value)
        elif select.id == "bitmap-chunk":
            form = replace(form, bitmap_chunk_kib=int(value) if value else None)
        elif select.id == "policy":
            form = replace(form, policy=value)
        elif select.id == "journal":
            form = replace(form, journal=value)
        self._set_form(form)

    @on(Input.Changed, "#device")
    def _device_typed(self, event: Input.Changed) -> None:
        self._set_form(replace(self.form, device=event.value))

    @on(Input.Changed, "#bitmap-file")
    def _bitmap_file_typed(self, event: Input.Changed) -> None:
        if not event.input.disabled:
            self._set_form(replace(self.form, bitmap_file=event.value))

    @on(Input.Changed, "#name")
    def _name_typed(self, event: Input.Changed) -> None:
        if not event.input.disabled:
            self._set_form(replace(self.form, name=event.value))

    @on(Checkbox.Changed)
    def _checked(self, event: Checkbox.Changed) -> None:
        checkbox = event.checkbox
        if checkbox.disabled:
            return
        if checkbox.id == "assume-clean":
            self._set_form(replace(self.form, assume_clean=checkbox.value))
        elif checkbox.id == "build":
            self._set_form(replace(self.form, build=checkbox.value))
        elif checkbox.id == "mixed-sizes":
            self._set_form(replace(self.form, allow_mixed_sizes=checkbox.value))

    # -- actions ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "create":
            return None if self.busy or not self.can_create else True
        return True

    def action_cancel(self) -> None:
        if self.busy:
            self.notify("mdadm is running; wait for it to finish.", severity="warning")
            return
        self.dismiss(None)

    @on(Button.Pressed, "#create")
    def _create_pressed(self) -> None:
        self.action_create()

    def action_create(self) -> None:
        plan = self.result.plan
        if plan is None or not self.can_create or self.busy:
            self.app.bell()
            return
        if refused_on_tree(self, self.root, "creating an array"):
            return
        body = confirm_body(plan, self.inventory, self.palette())
        dialog = ConfirmScreen(f"Create {plan.request.device}", body, plan.confirmation, "Create")

        def confirmed(typed: str | None) -> None:
            if typed:
                self.error = None
                self.busy = True
                self.run_create(plan, typed)

        self.app.push_screen(dialog, confirmed)

    @work(thread=True, exclusive=True, exit_on_error=False, group="create")
    def run_create(self, plan: CreatePlan, confirmed: str) -> None:
        """Thread worker: run the confirmed plan and post the outcome; never touches a widget."""
        try:
            outcome = md_run.execute_create(plan, confirmed=confirmed, root=SystemRoot(self.root))
        except Exception as exc:  # any failure is a message on screen, never a traceback
            self.log.error(f"create {plan.request.device} failed", exc)
            self.post_message(ActionFailed("create", failure_reason(f"Creating {plan.request.device}", exc)))
            return
        self.post_message(CreateFinished(plan, outcome))

    @on(CreateFinished)
    def _created(self, message: CreateFinished) -> None:
        self.busy = False
        self.dismiss(Created(message.plan, message.outcome))

    @on(ActionFailed)
    def _failed(self, message: ActionFailed) -> None:
        self.error = message.reason
        self.busy = False
        self.notify(message.reason.splitlines()[0], title="Create failed", severity="error", timeout=10)
        self._update_banner()
