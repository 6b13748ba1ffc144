"""mdadm.conf: where the distribution keeps it, what it says (ARRAY lines, MAILADDR, PROGRAM), and the edit
that makes an array assemble under its name after a reboot."""

from __future__ import annotations

import difflib
import shlex
from dataclasses import dataclass

from mdtui.model.array import normalize_uuid
from mdtui.probe.root import SystemRoot

DEBIAN_CONF = "/etc/mdadm/mdadm.conf"  # Debian, Ubuntu (initramfs-tools)
REDHAT_CONF = "/etc/mdadm.conf"  # RHEL, Fedora, SUSE, Arch (dracut, mkinitcpio)
# mdadm.conf is a few lines; anything far larger is not one and is not parsed.
CONF_LIMIT = 1 << 20
_DEBIAN_IDS = {"debian", "ubuntu", "raspbian", "linuxmint", "pop", "devuan"}
# mdadm's own keywords in its own order (config.c, keywords[]): a line's first word is the first keyword it
# abbreviates, case ignored, with at least three letters (match_keyword), so "MAIL" is MAILADDR while
# "MAILF" is MAILFROM and "PRO" is PROGRAM.
MDADM_KEYWORDS = (
    "DEVICES", "ARRAY", "MAILADDR", "MAILFROM", "PROGRAM", "CREATE", "HOMEHOST", "HOMECLUSTER", "AUTO",
    "POLICY", "PART-POLICY", "SYSFS", "MONITORDELAY", "ENCRYPTION_NO_VERIFY", "PROBING", "IMSM_DISABLE_OROM",
)  # fmt: skip


def keyword_of(word: str) -> str | None:
    """The mdadm.conf keyword a line's first word means to mdadm (see MDADM_KEYWORDS); None for none."""
    upper = word.upper()
    if len(upper) < 3:
        return None
    return next((keyword for keyword in MDADM_KEYWORDS if keyword.startswith(upper)), None)


@dataclass(frozen=True)
class Distribution:
    """How this system keeps arrays across a reboot: its mdadm.conf and the tool that rebuilds the initramfs."""

    family: str  # "debian" or "redhat" (everything dracut-based)
    conf_path: str
    initramfs_argv: tuple[str, ...]  # refresh the current kernel's initramfs
    initramfs_tool: str  # update-initramfs or dracut


def _os_release_ids(root: SystemRoot) -> set[str]:
    text = root.read_text("/etc/os-release") or root.read_text("/usr/lib/os-release") or ""
    ids: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key in ("ID", "ID_LIKE"):
            ids.update(value.strip().strip('"').lower().split())
    return ids


def detect_distribution(root: SystemRoot) -> Distribution:
    """Debian-like (os-release names it, or /etc/mdadm/ exists) or dracut-based (everything else)."""
    ids = _os_release_ids(root)
    debian = bool(ids & _DEBIAN_IDS) or (not ids and root.path("/etc/mdadm").is_dir())
    if debian:
        return Distribution("debian", DEBIAN_CONF, ("update-initramfs", "-u"), "update-initramfs")
    return Distribution("redhat", REDHAT_CONF, ("dracut", "-f"), "dracut")


@dataclass(frozen=True)
class ArrayLine:
    """One ARRAY line of mdadm.conf (or of `mdadm --detail --brief`)."""

    line_no: int  # 1-based in the file; 0 for a line not from a file
    text: str
    device: str | None  # /dev/md0, /dev/md/name, or None ("<ignore>", missing)
    uuid: str | None  # normalized
    name: str | None  # name=host:0


@dataclass(frozen=True)
class MdadmConf:
    path: str
    exists: bool
    text: str
    arrays: tuple[ArrayLine, ...] = ()
    mailaddr: str | None = None
    program: str | None = None

    def line_for(self, uuid: str | None) -> ArrayLine | None:
        wanted = normalize_uuid(uuid)
        return next((a for a in self.arrays if wanted and a.uuid == wanted), None)


def strip_comment(line: str) -> str:
    """The line without its comment, as mdadm's conf_word reads it: a '#' starts a comment only where a
    word would start (at the line's start or after white space, outside quotes); inside a word, as in
    name=host#1, it is part of the word."""
    quote = ""
    word_start = True
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
            continue
        if char in " \t":
            word_start = True
            continue
        if char == "#" and word_start:
            return line[:index]
        if char in "'\"":
            quote = char
        word_start = False
    return line


def logical_lines(text: str) -> list[tuple[int, str]]:
    """mdadm.conf lines with continuations joined (a line starting with white space continues the last)."""
    lines: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = strip_comment(raw).rstrip()
        if not line.strip():
            continue
        if raw[:1].isspace() and lines:
            lines[-1] = (lines[-1][0], lines[-1][1] + " " + line.strip())
        else:
            lines.append((number, line.strip()))
    return lines


def parse_array_line(text: str, line_no: int = 0) -> ArrayLine | None:
    try:
        words = shlex.split(text, comments=False)
    except ValueError:
        words = text.split()
    if not words or words[0].upper() != "ARRAY":
        return None
    device = words[1] if len(words) > 1 and "=" not in words[1] else None
    fields = {}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if sep:
            fields[key.lower()] = value
    return ArrayLine(line_no, text, device, normalize_uuid(fields.get("uuid")), fields.get("name"))


def parse_conf(path: str, text: str | None) -> MdadmConf:
    if text is None:
        return MdadmConf(path, False, "")
    arrays = []
    mailaddr = program = None
    for number, line in logical_lines(text):
        keyword = keyword_of(line.split(None, 1)[0])
        rest = line.split(None, 1)[1] if " " in line else ""
        if keyword == "ARRAY":
            parsed = parse_array_line(line, number)
            if parsed is not None:
                arrays.append(parsed)
        elif keyword == "MAILADDR" and rest:
            mailaddr = rest.strip()
        elif keyword == "PROGRAM" and rest:
            program = rest.strip()
    return MdadmConf(path, True, text, tuple(arrays), mailaddr, program)


def read_conf(root: SystemRoot, path: str) -> MdadmConf:
    return parse_conf(path, root.read_text(path, limit=CONF_LIMIT))


@dataclass(frozen=True)
class ConfEdit:
    """The new mdadm.conf text for one array, and what changed."""

    path: str
    old_text: str
    new_text: str
    added: str | None  # the ARRAY line added
    replaced: str | None  # the stale line it replaced (same UUID, other words)
    by: str = "persist"  # the verb that makes it, named in the diff's header

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        return text_diff(self.old_text, self.new_text, f"{self.path} (now)", f"{self.path} (after {self.by})")


def text_diff(old_text: str, new_text: str, fromfile: str, tofile: str) -> str:
    """A unified diff of a config file's change, each line shown with its line feed: a file whose last line
    has none would otherwise print that line and the first added one run together."""
    return "".join(
        difflib.unified_diff(
            [line.rstrip("\r\n") + "\n" for line in old_text.splitlines()],
            [line.rstrip("\r\n") + "\n" for line in new_text.splitlines()],
            fromfile=fromfile,
            tofile=tofile,
        )
    )


def add_array_line(conf: MdadmConf, brief: str) -> ConfEdit:
    """The conf with ``brief`` (an ARRAY line from `mdadm --detail --brief`) in it.

    An ARRAY line with the same UUID that says the same is left alone (no change); one that says something
    else is replaced in place (so the array keeps its place and no second line names the UUID); otherwise
    the line is appended with a comment saying who added it.
    """
    wanted = parse_array_line(brief.strip())
    if wanted is None or wanted.uuid is None:
        raise ValueError(f"not an ARRAY line with a UUID: {brief.strip()!r}")
    line = " ".join(brief.split())
    existing = conf.line_for(wanted.uuid)
    old = conf.text
    if existing is not None:
        if " ".join(existing.text.split()) == line:
            return ConfEdit(conf.path, old, old, None, None)
        lines = old.splitlines(keepends=True)
        index = existing.line_no - 1
        ending = "\n" if not lines[index].endswith("\n") else lines[index][len(lines[index].rstrip("\r\n")) :]
        # Continuation lines of the old entry go with it.
        end = index + 1
        while end < len(lines) and lines[end][:1].isspace() and lines[end].strip():
            end += 1
        new_lines = [*lines[:index], line + ending, *lines[end:]]
        return ConfEdit(conf.path, old, "".join(new_lines), line, existing.text)
    prefix = old if not old or old.endswith("\n") else old + "\n"
    new = f"{prefix}# added by mdtui persist\n{line}\n"
    return ConfEdit(conf.path, old, new, line, None)
