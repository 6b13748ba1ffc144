#!/usr/bin/env bash
# Put this checkout's `mdtui` on PATH, with its man page and bash/zsh/fish completion, as links into the
# checkout (.venv/bin/mdtui, share/): as root under /usr/local, else under ~/.local.
#   MDTUI_PREFIX=DIR  links under DIR instead (DIR/bin, DIR/share/...)
# A file already there that is not a link is someone else's: left alone, and said so.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${MDTUI_PREFIX:-}" ]; then
  prefix="$MDTUI_PREFIX"
elif [ "$(id -u)" -eq 0 ]; then
  prefix=/usr/local
else
  prefix="$HOME/.local"
fi

link() {
  local source="$1" dest="$2"
  if [ -e "$dest" ] && [ ! -L "$dest" ]; then
    echo "install-links: $dest exists and is not a link; left alone (remove it to use this checkout's)"
    return
  fi
  mkdir -p "$(dirname "$dest")"
  ln -sfn "$source" "$dest"
}

link "$here/.venv/bin/mdtui" "$prefix/bin/mdtui"
link "$here/share/man/man8/mdtui.8" "$prefix/share/man/man8/mdtui.8"
link "$here/share/bash-completion/completions/mdtui" "$prefix/share/bash-completion/completions/mdtui"
link "$here/share/zsh/site-functions/_mdtui" "$prefix/share/zsh/site-functions/_mdtui"
link "$here/share/fish/vendor_completions.d/mdtui.fish" "$prefix/share/fish/vendor_completions.d/mdtui.fish"

# A new login shell's PATH, not this one's: the caller may have put the directory there only for itself.
case ":$(env -i HOME="$HOME" bash -lc 'echo "$PATH"' 2>/dev/null):" in
  *":$prefix/bin:"*) echo "install-links: mdtui is on PATH ($prefix/bin/mdtui)" ;;
  *) echo "install-links: $prefix/bin is not on a new shell's PATH; add it: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
