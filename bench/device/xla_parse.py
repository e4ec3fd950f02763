# XLA's own parser (jaxlib, on the device machine) on the modules xlite prints:
#   python3 xla_parse.py FILE...   one line per file: "parse<TAB>ok|error<TAB>FILE<TAB>message"
# Run by run.sh on `xlite opt --pipeline=cpu` of every program (the text xlite dumps as
# cpu_after_optimizations.txt), to check that it is XLA's text format, as XLA reads it.
import sys


def parser():
    # jaxlib 0.11 has it in jaxlib._hlo; older ones in the extension module.
    try:
        import jaxlib._hlo as hlo

        return hlo.hlo_module_from_text
    except (ImportError, AttributeError):
        from jax._src.lib import xla_client as xc

        return xc._xla.hlo_module_from_text


parse = parser()
for path in sys.argv[1:]:
    try:
        parse(open(path).read())
        print("parse\tok\t%s\t" % path, flush=True)
    except Exception as e:
        message = str(e).replace("\n", " ")[:300]
        print("parse\terror\t%s\t%s" % (path, message), flush=True)
