"""The hostile skill corpus: escapes, hangs, host crashes, memory bombs and bad actions.

Each entry is ``(name, category, cause, body)``: ``body`` is the body of ``def f(obs):`` and
``cause`` a regular expression that the stop must match, as ``"<kind>: <message>"`` where kind is
``compile`` (refused before it runs) or the runtime ``SkillError.kind``. Categories:

* ``escape``: reach host objects, module globals, frames or modules (and a secret in the host);
* ``hang``: loops the interpreter cannot see (C code) or that swallow the budget;
* ``crash``: exceptions or values that used to take the host down;
* ``memory``: gigabyte allocations in one C call (or a few);
* ``action``: return values that are not an available action index.

``WORKER_ONLY`` names entries that only the isolated worker stops (its ``RLIMIT_AS`` or hard
deadline): in-process they would really allocate gigabytes or hang, which is why in-process is
for trusted skills only.
"""

from __future__ import annotations

import textwrap

COMPILE = r"^compile: "
POLICY = r"^policy: "
BUDGET = r"^budget: "
RESOURCE = r"^resource: refused: "
STOPPED = r"^(resource|budget): "  # memory limit, time budget or the worker's hard deadline
INVALID = r"^invalid_action: "
NAME_ERROR = r"^runtime: .*NameError"

_C = [
    # --- escapes: format strings ------------------------------------------------------------------
    ("fmt_class", "escape", COMPILE + r".*format", "return '{0.__class__}'.format(obs)"),
    ("fmt_globals", "escape", COMPILE + r".*format", "return '{0.__globals__}'.format(parse_obs)"),
    ("fmt_map", "escape", COMPILE + r".*format_map", "return '{x.__class__}'.format_map({'x': obs})"),
    ("fmt_unbound", "escape", COMPILE + r".*format", "return str.format('{0.__class__}', obs)"),
    ("fmt_getattr", "escape", POLICY + r".*format", "return getattr('{0.__class__}', 'format')(obs)"),
    ("fmt_getattr_type", "escape", POLICY + r".*format_map", "return getattr(str, 'format_map')"),
    ("fmt_item_path", "escape", COMPILE + r".*format", "return '{0[0].__class__}'.format([obs])"),
    ("fmt_string_module", "escape", POLICY + r"import of 'string'", "import string\nreturn 1"),
    ("fmt_formatter", "escape", POLICY + r"import of 'string'", "from string import Formatter\nreturn 1"),
    (
        "fmt_userstring",
        "escape",
        POLICY + r"collections has no 'UserString'",
        "from collections import UserString\nreturn 1",
    ),
    (
        "fmt_partial",
        "escape",
        COMPILE + r".*format",
        "import functools\nreturn functools.partial(str.format, '{0.__class__}')(obs)",
    ),
    (
        "fmt_partial_getattr",
        "escape",
        POLICY + r"getattr of",
        "import functools\nreturn functools.partial(getattr, obs)('__class__')",
    ),
    (
        "fmt_map_builtin",
        "escape",
        POLICY + r".*format",
        "return list(map(getattr, ['{0.__class__}'], ['format']))",
    ),
    ("fstring_dunder", "escape", COMPILE + r".*__class__", "return f'{obs.__class__}'"),
    ("fstring_spec_dunder", "escape", COMPILE + r".*__class__", "return f'{obs:{obs.__class__}}'"),
    # --- escapes: frames, tracebacks, generators, closures, globals --------------------------------
    (
        "tb_attr",
        "escape",
        COMPILE,
        "try:\n    1 / 0\nexcept Exception as e:\n    return e.__traceback__.tb_frame",
    ),
    (
        "tb_getattr",
        "escape",
        POLICY,
        "try:\n    1 / 0\nexcept Exception as e:\n    return getattr(e, '__traceback__')",
    ),
    (
        "tb_next",
        "escape",
        COMPILE,
        "try:\n    1 / 0\nexcept Exception as e:\n    t = e.with_traceback(None)\n    return t.tb_next",
    ),
    ("gen_frame", "escape", COMPILE, "g = (x for x in [1])\nreturn g.gi_frame.f_back.f_globals"),
    ("gen_frame_getattr", "escape", POLICY, "g = (x for x in [1])\nreturn getattr(g, 'gi_frame')"),
    ("gen_code", "escape", COMPILE, "g = (x for x in [1])\nreturn g.gi_code"),
    ("gen_yieldfrom", "escape", POLICY, "g = (x for x in [1])\nreturn getattr(g, 'gi_yieldfrom')"),
    ("closure", "escape", COMPILE, "return parse_obs.__closure__[0].cell_contents"),
    ("closure_getattr", "escape", POLICY, "return getattr(parse_obs, '__closure__')"),
    ("api_globals", "escape", COMPILE, "return attack.__globals__['os']"),
    ("api_globals_getattr", "escape", POLICY, "return getattr(attack, '__globals__')"),
    ("api_func_attr", "escape", r"^runtime: .*AttributeError", "return getattr(find_path, 'func')"),
    ("lambda_code", "escape", COMPILE, "return (lambda: 0).__code__"),
    ("subclasses", "escape", COMPILE, "return ().__class__.__bases__[0].__subclasses__()"),
    ("module_dict", "escape", COMPILE, "import math\nreturn math.__dict__"),
    ("module_dict_getattr", "escape", POLICY, "import math\nreturn getattr(math, '__dict__')"),
    ("random_self", "escape", COMPILE, "return random.choice.__self__"),
    (
        "collections_abc",
        "escape",
        POLICY + r"collections has no 'abc'",
        "from collections import abc\nreturn 1",
    ),
    (
        "collections_abc_dotted",
        "escape",
        POLICY + r"import of 'collections.abc'",
        "import collections.abc\nreturn 1",
    ),
    (
        "functools_wraps",
        "escape",
        POLICY + r"functools has no 'update_wrapper'",
        "from functools import update_wrapper\nreturn 1",
    ),
    (
        "functools_rlock",
        "escape",
        POLICY + r"functools has no 'RLock'",
        "from functools import RLock\nreturn 1",
    ),
    ("import_os", "escape", POLICY + r"import of 'os'", "import os\nreturn 1"),
    ("import_sys_from", "escape", POLICY + r"import of 'sys'", "from sys import modules\nreturn 1"),
    ("dunder_import", "escape", COMPILE, "return __import__('os').getpid()"),
    ("open_file", "escape", NAME_ERROR + r".*open", "return open('/etc/passwd').read()"),
    ("eval", "escape", COMPILE, "return eval('1')"),
    ("exec", "escape", COMPILE, "exec('x = 1')\nreturn 1"),
    ("type_mro", "escape", NAME_ERROR + r".*type", "return type(obs).mro()"),
    ("vars", "escape", NAME_ERROR + r".*vars", "return vars(obs)"),
    ("builtins_dict", "escape", COMPILE, "return __builtins__['open']"),
    ("tofile", "escape", COMPILE + r".*tofile", "parse_obs(obs).data.tofile('/tmp/pwned')\nreturn 1"),
    ("tofile_getattr", "escape", POLICY + r".*tofile", "getattr(obs, 'tofile')\nreturn 1"),
    ("ctypes_attr", "escape", COMPILE + r".*ctypes", "return parse_obs(obs).data.ctypes.data"),
    ("getattr_nonstr", "escape", POLICY, "return getattr(obs, 1)"),
    ("setattr_api", "escape", r"^runtime: ", "setattr(attack, 'x', 1)\nreturn 1"),
    ("setattr_module", "escape", r"^runtime: ", "import math\nsetattr(math, 'pi', 3)\nreturn 1"),
    ("class_def", "escape", NAME_ERROR, "class A(int):\n    pass\nreturn A(1)"),
    ("async_def", "escape", COMPILE + r".*async", "async def g():\n    return 1\nreturn 1"),
    ("return_helper", "escape", INVALID + r".*returned a Helper", "return parse_obs"),
    ("return_obsdata", "escape", INVALID + r".*returned a ObsData", "return parse_obs(obs)"),
    ("return_module", "escape", INVALID + r".*returned a _Module", "import math\nreturn math"),
    ("return_partial_func", "escape", INVALID, "import functools\nreturn functools.partial(attack, 1)"),
    # --- hangs in C, or that swallow the budget -------------------------------------------------------
    ("sum_iter_sentinel", "hang", BUDGET, "return sum(iter(int, 1))"),
    ("max_iter_sentinel", "hang", BUDGET, "return max(iter(int, 1))"),
    ("any_iter_sentinel", "hang", BUDGET, "return int(any(iter(int, 1)))"),
    ("sorted_iter_sentinel", "hang", BUDGET, "return len(sorted(iter(int, 1)))"),
    ("set_iter_sentinel", "hang", BUDGET, "return len(set(iter(lambda: 0, 1)))"),
    (
        "deque_maxlen",
        "hang",
        BUDGET,
        "import collections\ncollections.deque(iter(int, 1), maxlen=1)\nreturn 1",
    ),
    ("nlargest_infinite", "hang", BUDGET, "import heapq\nreturn heapq.nlargest(1, iter(int, 1))[0]"),
    (
        "islice_infinite",
        "hang",
        BUDGET,
        "import itertools\nreturn len(list(itertools.islice(iter(int, 1), 10**18)))",
    ),
    (
        "reduce_infinite",
        "hang",
        BUDGET,
        "import functools\nreturn functools.reduce(lambda a, b: a, iter(int, 1))",
    ),
    ("join_infinite", "hang", BUDGET, "return len(''.join(map(str, iter(int, 1))))"),
    (
        "itertools_count",
        "hang",
        POLICY + r"itertools has no 'count'",
        "from itertools import count\nreturn max(count())",
    ),
    (
        "itertools_cycle",
        "hang",
        r"^runtime: .*has no attribute 'cycle'",
        "import itertools\nreturn max(itertools.cycle([1]))",
    ),
    (
        "itertools_repeat",
        "hang",
        POLICY + r"itertools has no 'repeat'",
        "from itertools import repeat\nreturn sum(repeat(1))",
    ),
    (
        "itertools_product",
        "hang",
        POLICY + r"itertools has no 'product'",
        "from itertools import product\nreturn 1",
    ),
    (
        "counter_elements",
        "hang",
        RESOURCE + r"Counter",
        "from collections import Counter\nreturn sum(Counter(a=10**18).elements())",
    ),
    ("random_choices", "hang", RESOURCE + r"random.choices", "return len(random.choices([1], k=10**9))"),
    (
        "random_sample_counts",
        "hang",
        RESOURCE + r"random.sample",
        "return len(random.sample([1], 10**9, counts=[10**9]))",
    ),
    ("pow_builtin", "hang", RESOURCE + r"integer", "return pow(10, 10**9) % 7"),
    ("pow_modular", "hang", RESOURCE + r"modular", "return pow(3, 10**3000, 10**3001)"),
    ("pow_operator", "hang", RESOURCE + r"integer", "return (10 ** 10 ** 8) % 7"),
    ("lshift", "hang", RESOURCE + r"integer", "return (1 << 10**10) % 7"),
    ("square_loop", "hang", RESOURCE + r"integer", "x = 3\nwhile True:\n    x = x * x"),
    ("factorial", "hang", RESOURCE + r"factorial", "import math\nreturn math.factorial(10**6) % 7"),
    ("prod", "hang", RESOURCE + r"integer", "import math\nreturn math.prod(range(1, 10**6)) % 7"),
    ("comb", "hang", RESOURCE + r"comb", "import math\nreturn math.comb(10**7, 5 * 10**6) % 7"),
    ("perm", "hang", RESOURCE + r"perm", "import math\nreturn math.perm(10**6) % 7"),
    ("lcm", "hang", RESOURCE + r"integer", "import math\nreturn math.lcm(*range(1, 10**5)) % 7"),
    ("while_true", "hang", BUDGET, "while True:\n    pass"),
    (
        "nested_for",
        "hang",
        BUDGET,
        "n = 0\nfor i in range(10**6):\n    for j in range(10**6):\n        n += 1\nreturn n",
    ),
    ("nested_comprehension", "hang", BUDGET, "return sum(1 for i in range(10**6) for j in range(10**6))"),
    (
        "dict_comprehension",
        "hang",
        BUDGET,
        "return len({(i, j): 0 for i in range(10**6) for j in range(10**6)})",
    ),
    ("infinite_generator", "hang", BUDGET, "def g():\n    while True:\n        yield 1\nreturn sum(g())"),
    (
        "catch_budget",
        "hang",
        BUDGET,
        "while True:\n    try:\n        while True:\n            pass\n    except Exception:\n        pass",
    ),
    (
        "catch_budget_bare",
        "hang",
        BUDGET,
        "n = 0\nwhile True:\n    try:\n        while True:\n            n += 1\n    except:\n        n = 0",
    ),
    (
        "catch_and_return",
        "hang",
        BUDGET + r".*caught",
        "try:\n    while True:\n        pass\nexcept Exception:\n    return 1",
    ),
    (
        "catch_recursion_exponential",
        "hang",
        BUDGET,
        "def g(n):\n    try:\n        return g(n + 1)\n    except:\n        return g(n + 1)\nreturn g(0)",
    ),
    ("heavy_body_loop", "hang", STOPPED, "while True:\n    sorted(range(10**6), key=lambda x: -x)"),
    # --- host crashes -------------------------------------------------------------------------------------
    ("raise_system_exit", "crash", NAME_ERROR + r".*SystemExit", "raise SystemExit(0)"),
    ("raise_keyboard_interrupt", "crash", NAME_ERROR + r".*KeyboardInterrupt", "raise KeyboardInterrupt"),
    ("raise_generator_exit", "crash", NAME_ERROR + r".*GeneratorExit", "raise GeneratorExit"),
    ("raise_base_exception", "crash", NAME_ERROR + r".*BaseException", "raise BaseException('x')"),
    (
        "generator_ignores_exit",
        "crash",
        r"^runtime: .*RuntimeError: generator ignored GeneratorExit",
        "def g():\n    while True:\n        try:\n            yield 1\n        except:\n            pass\nit = g()\nnext(it)\nit.close()\nreturn 1",
    ),
    ("raise_stop_iteration", "crash", r"^runtime: .*StopIteration", "raise StopIteration"),
    ("raise_recursion_error", "crash", NAME_ERROR + r".*RecursionError", "raise RecursionError('deep')"),
    ("recursion", "crash", BUDGET + r".*recursion", "def g(n):\n    return g(n + 1)\nreturn g(0)"),
    (
        "nested_return",
        "crash",
        INVALID + r".*returned a list",
        "x = []\nfor i in range(10000):\n    x = [x]\nreturn x",
    ),
    ("selfref_return", "crash", INVALID + r".*returned a list", "x = []\nx.append(x)\nreturn x"),
    ("selfref_dict_return", "crash", INVALID + r".*returned a dict", "d = {}\nd[1] = d\nreturn d"),
    (
        "nested_raise",
        "crash",
        r"^runtime: .*ValueError: \[\[\[",
        "x = []\nfor i in range(10000):\n    x = [x]\nraise ValueError(x)",
    ),
    (
        "nested_keyerror",
        "crash",
        r"^runtime: .*KeyError: \[\[\[",
        "x = []\nfor i in range(3000):\n    x = [x]\nraise KeyError(x, x)",
    ),
    (
        "nested_compare",
        "crash",
        BUDGET + r".*recursion",
        "x = []\ny = []\nfor i in range(5000):\n    x = [x]\n    y = [y]\nreturn 1 if x == y else 0",
    ),
    ("huge_message", "crash", r"^runtime: .*ValueError: x{100}", "raise ValueError('x' * 10**6)"),
    ("raise_memory_error", "crash", r"^resource: ", "raise MemoryError"),
    # --- memory bombs ---------------------------------------------------------------------------------
    ("str_mul", "memory", RESOURCE + r"sequence", "return len('x' * 10**10)"),
    ("str_mul_chain", "memory", RESOURCE + r"sequence", "return len('x' * 10**6 * 10**6)"),
    ("list_mul", "memory", RESOURCE + r"sequence", "return len([0] * 10**9)"),
    ("bytes_mul", "memory", RESOURCE + r"sequence", "return len(b'x' * 10**10)"),
    (
        "deque_mul",
        "memory",
        RESOURCE + r"sequence",
        "from collections import deque\nreturn len(deque([1]) * 10**9)",
    ),
    ("augassign_mul", "memory", RESOURCE + r"sequence", "x = 'x'\nx *= 10**10\nreturn 1"),
    ("join_list", "memory", RESOURCE + r"joined", "return len('x'.join(['y' * 10**6] * 1000))"),
    (
        "join_generator",
        "memory",
        RESOURCE + r"joined",
        "return len(''.join('y' * 10**6 for i in range(1000)))",
    ),
    ("join_unbound", "memory", RESOURCE + r"joined", "return len(str.join('', ['y' * 10**6] * 1000))"),
    ("center", "memory", RESOURCE + r"center", "return len('x'.center(10**10))"),
    ("ljust", "memory", RESOURCE + r"ljust", "return len('x'.ljust(10**10))"),
    ("rjust_bytes", "memory", RESOURCE + r"rjust", "return len(b'x'.rjust(10**10))"),
    ("zfill", "memory", RESOURCE + r"zfill", "return len('1'.zfill(10**10))"),
    (
        "center_unbound_map",
        "memory",
        RESOURCE + r"center",
        "return len(list(map(str.center, ['x'], [10**10])))",
    ),
    ("fstring_width", "memory", RESOURCE + r"format width", "return len(f'{1:>{10**9}}')"),
    ("fstring_precision", "memory", RESOURCE + r"format width", "return len(f'{1.0:.{10**9}f}')"),
    ("fstring_literal_width", "memory", RESOURCE + r"format width", "return len(f'{1:1000000000}')"),
    ("percent_width", "memory", RESOURCE + r"format width", "return len('%10000000000d' % 1)"),
    ("percent_star", "memory", POLICY + r"'\*' widths", "return len('%*d' % (10**9, 1))"),
    (
        "percent_precision_var",
        "memory",
        RESOURCE + r"format width",
        "fmt = '%.' + str(10**9) + 'f'\nreturn len(fmt % 1.0)",
    ),
    ("to_bytes", "memory", RESOURCE + r"byte string", "return len((1).to_bytes(10**10, 'big'))"),
    ("to_bytes_unbound", "memory", RESOURCE + r"byte string", "return len(int.to_bytes(1, 10**10, 'big'))"),
    ("replace_empty", "memory", RESOURCE + r"replaced", "return len(('x' * 10**6).replace('', 'y' * 1000))"),
    ("replace_grow", "memory", RESOURCE + r"replaced", "return len(('x' * 10**5).replace('x', 'y' * 10**5))"),
    ("expandtabs", "memory", RESOURCE + r"expanded", "return len(('\\t' * 10**5).expandtabs(10**5))"),
    (
        "translate",
        "memory",
        RESOURCE + r"translated",
        "return len(('x' * 10**6).translate({120: 'y' * 1000}))",
    ),
    ("bytes_int", "memory", RESOURCE + r"bytes", "return len(bytes(10**10))"),
    ("range_big", "memory", RESOURCE + r"range", "return len(list(range(10**10)))"),
    ("sorted_range", "memory", RESOURCE + r"range", "return len(sorted(range(10**9)))"),
    ("list_extend", "memory", RESOURCE + r"list", "x = [0] * 10**6\nx += x * 1\nx += x * 1\nreturn 1"),
    ("list_comprehension_lists", "memory", STOPPED, "x = [[0] * 10**6 for i in range(10**6)]\nreturn 1"),
    ("string_doubling", "memory", STOPPED, "x = 'x'\nfor i in range(64):\n    x = x + x\nreturn 1"),
    ("list_doubling", "memory", STOPPED, "x = [0]\nfor i in range(64):\n    x = x + x\nreturn 1"),
    ("sum_lists", "memory", STOPPED, "x = [[0] * 10**6] * 10**6\nreturn len(sum(x, []))"),
    # --- actions ------------------------------------------------------------------------------------------
    ("unavailable", "action", INVALID + r".*not available", "return 99"),
    ("negative", "action", INVALID + r".*not available", "return -1"),
    ("huge_int", "action", INVALID + r".*not available", "return 10**100"),
    ("no_return", "action", INVALID + r".*no return statement", "x = 1"),
    ("string_action", "action", INVALID + r".*'north'", "return 'north'"),
    ("float_action", "action", INVALID + r".*float", "return 1.0"),
    ("bool_action", "action", INVALID + r".*bool", "return True"),
]

WORKER_ONLY = frozenset(
    {"heavy_body_loop", "list_comprehension_lists", "string_doubling", "list_doubling", "sum_lists"}
)


def source(body: str) -> str:
    """The skill file of a corpus entry."""
    return "def f(obs):\n" + textwrap.indent(body, "    ") + "\n"


# Whole files: code that runs when the file is loaded, not when the skill is called.
_FILES = {
    "decorator": (
        COMPILE + r".*takes no decorators",
        "@(lambda g: sum(iter(int, 1)))\ndef f(obs):\n    return 1\n",
    ),
    "default_argument": (COMPILE + r".*without a default", "def f(obs=sum(iter(int, 1))):\n    return 1\n"),
}
_C += [("default_argument", "hang", None, None), ("decorator", "escape", None, None)]

CORPUS = {
    name: (category, *(_FILES[name] if body is None else (cause, source(body))))
    for name, category, cause, body in _C
}
assert len(CORPUS) == len(_C), "duplicate names in the hostile corpus"
