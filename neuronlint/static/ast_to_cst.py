"""Build the LibCST tree the checkers walk from the stdlib `ast` tree, without LibCST's parser.

The scan's cost is dominated by `libcst.parse_module` (the Rust parser, then the conversion of its
output into Python node objects, whitespace nodes included). The scan already runs `ast.parse` on
every file (parse_guard), and `ast.parse` is about five times faster than `parse_module`. `convert`
turns that ast tree into the LibCST tree `libcst.parse_module(source)` would give, node for node
and field for field, except whitespace and punctuation (parentheses, commas, colons, comments,
blank lines, the whitespace nodes): those hold their constructors' defaults. So the tree's code
(`Module.code`) and position metadata are NOT those of the source; positions and code text are
obtained elsewhere, by parsing single statements with LibCST (the map `convert` returns leads from
each statement to its ast node, whose lines are exact).

Anything not converted faithfully raises `Unsupported` (the caller then falls back to
`libcst.parse_module`): `match` statements and starred subscripts (`x[*a]`).

Literal text is the source's own: LibCST keeps the raw token (`SimpleString.value` with prefix and
quotes, `Integer.value` as written), so it is sliced out of the source at the ast positions (which
count UTF-8 bytes). f-strings and implicitly concatenated strings are handed to
`libcst.parse_expression` on their source segment, which gives LibCST's exact shape for them.

Speed (garbage collector off, one core, a shared and busy machine, so ratios matter more than
seconds; benchmarks/ast_to_cst_check.py): on 2420 files of pytorch/ao, peft and Megatron-LM,
`ast.parse` 4.3 s + `convert` 8.0 s, against 47 s for `cstparse.parse_module` (convert alone 0.17
of it, 0.14-0.19 per corpus) and 51 s for `libcst.parse_module`. Checked against LibCST on the
18109 Python files of 53 repositories: 0 differences, 41 files Unsupported (40 `match`).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import threading
from collections.abc import Callable
from typing import Any

import libcst as cst
from libcst import MaybeSentinel

from neuronlint.static import cstparse

__all__ = ["Unsupported", "convert"]


class Unsupported(Exception):
    """A construct `convert` does not rebuild faithfully; parse the file with LibCST instead."""


class _Dispatch(dict):
    # A missing ast type is a construct without a converter: Unsupported, at no cost on the hit path.
    def __missing__(self, key: type) -> None:
        raise Unsupported(key.__name__)


# Physical lines the way the tokenizer (and so ast's line numbers) counts them: \r\n, \r or \n end
# a line; str.splitlines would also split at \f, \v, \x1c.. and \u2028, which do not end a line.
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+")
# libcst._nodes.whitespace.NEWLINE_RE: the first match is the module's default_newline.
_NEWLINE_RE = re.compile(r"\r\n?|\n")
_CONTINUATION_RE = re.compile(r"\\(\r\n?|\n)")

_DEFAULT = MaybeSentinel.DEFAULT


def _shared_whitespace(cls: type, *args: object) -> dict[str, cst.CSTNode]:
    """Keyword arguments that give `cls` one shared instance of each whitespace/punctuation node
    its constructor would otherwise build afresh (a default_factory), taken from a prototype.

    Those nodes are most of what the constructors build (SimpleStatementLine's TrailingWhitespace,
    Attribute's Dot, a Call's and each Arg's whitespace: 700k of 1.55M nodes on peft), so sharing
    them cuts convert's time by a third. The trees' code is the same; only these nodes' identity is
    shared, which matters to nothing that reads them (no metadata is computed on these trees).
    """
    proto = cls(*args)
    shared = {}
    for f in dataclasses.fields(cls):
        value = getattr(proto, f.name)
        if f.default_factory is not dataclasses.MISSING and isinstance(value, cst.CSTNode):
            shared[f.name] = value
    return shared


_X = cst.Name("x")
_LINE_WS = _shared_whitespace(cst.SimpleStatementLine, [])
_ARG_WS = _shared_whitespace(cst.Arg, _X)
_ATTRIBUTE_WS = _shared_whitespace(cst.Attribute, _X, _X)
_CALL_WS = _shared_whitespace(cst.Call, _X)
_ASSIGN_TARGET_WS = _shared_whitespace(cst.AssignTarget, _X)
_BLOCK_WS = _shared_whitespace(cst.IndentedBlock, [])
_SUBSCRIPT_WS = _shared_whitespace(cst.Subscript, _X, [cst.SubscriptElement(cst.Index(_X))])
_PARAM_WS = _shared_whitespace(cst.Param, _X)

# Local names for the constructors: one global lookup instead of a global plus an attribute.
_Name = cst.Name
_Attribute = cst.Attribute
_Call = cst.Call
_Arg = cst.Arg
_Integer = cst.Integer
_Float = cst.Float
_Imaginary = cst.Imaginary
_SimpleString = cst.SimpleString
_Element = cst.Element
_StarredElement = cst.StarredElement
_Subscript = cst.SubscriptElement
_Index = cst.Index
_Param = cst.Param
_Annotation = cst.Annotation
_AsName = cst.AsName
_SimpleStatementLine = cst.SimpleStatementLine
_IndentedBlock = cst.IndentedBlock
_Else = cst.Else

_BINOP = {
    ast.Add: cst.Add,
    ast.Sub: cst.Subtract,
    ast.Mult: cst.Multiply,
    ast.MatMult: cst.MatrixMultiply,
    ast.Div: cst.Divide,
    ast.FloorDiv: cst.FloorDivide,
    ast.Mod: cst.Modulo,
    ast.Pow: cst.Power,
    ast.LShift: cst.LeftShift,
    ast.RShift: cst.RightShift,
    ast.BitOr: cst.BitOr,
    ast.BitAnd: cst.BitAnd,
    ast.BitXor: cst.BitXor,
}
_AUGOP = {
    ast.Add: cst.AddAssign,
    ast.Sub: cst.SubtractAssign,
    ast.Mult: cst.MultiplyAssign,
    ast.MatMult: cst.MatrixMultiplyAssign,
    ast.Div: cst.DivideAssign,
    ast.FloorDiv: cst.FloorDivideAssign,
    ast.Mod: cst.ModuloAssign,
    ast.Pow: cst.PowerAssign,
    ast.LShift: cst.LeftShiftAssign,
    ast.RShift: cst.RightShiftAssign,
    ast.BitOr: cst.BitOrAssign,
    ast.BitAnd: cst.BitAndAssign,
    ast.BitXor: cst.BitXorAssign,
}
_UNARYOP = {ast.UAdd: cst.Plus, ast.USub: cst.Minus, ast.Invert: cst.BitInvert, ast.Not: cst.Not}
_BOOLOP = {ast.And: cst.And, ast.Or: cst.Or}
_CMPOP = {
    ast.Eq: cst.Equal,
    ast.NotEq: cst.NotEqual,
    ast.Lt: cst.LessThan,
    ast.LtE: cst.LessThanEqual,
    ast.Gt: cst.GreaterThan,
    ast.GtE: cst.GreaterThanEqual,
    ast.In: cst.In,
    ast.NotIn: cst.NotIn,
    ast.Is: cst.Is,
    ast.IsNot: cst.IsNot,
}


class _Converter:
    __slots__ = ("lines", "stmt_map", "default_indent")

    def __init__(self, source: str) -> None:
        self.lines: list[str] = _LINE_RE.findall(source)
        self.stmt_map: dict[int, ast.AST] = {}
        # The first indented block's indent (LibCST: the first INDENT token's); None until seen.
        self.default_indent: str | None = None

    # -- source text -------------------------------------------------------------------------

    def _col(self, line: str, col: int) -> int:
        """The character index of UTF-8 byte offset `col` in `line` (ast columns count bytes)."""
        if line.isascii():
            return col
        return len(line.encode()[:col].decode())

    def text(self, lineno: int, col: int, end_lineno: int, end_col: int) -> str:
        lines = self.lines
        first = lines[lineno - 1]
        if lineno == end_lineno:
            if first.isascii():
                return first[col:end_col]
            return first.encode()[col:end_col].decode()
        last = lines[end_lineno - 1]
        return (
            first[self._col(first, col) :]
            + "".join(lines[lineno : end_lineno - 1])
            + last[: self._col(last, end_col)]
        )

    def segment(self, n: ast.AST) -> str:
        return self.text(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)

    # -- expressions -------------------------------------------------------------------------

    def expr(self, n: ast.expr) -> cst.BaseExpression:
        return _EXPR[type(n)](self, n)

    def opt(self, n: ast.expr | None) -> cst.BaseExpression | None:
        return None if n is None else _EXPR[type(n)](self, n)

    def elements(self, elts: list[ast.expr]) -> list[cst.BaseElement]:
        out = []
        for e in elts:
            if type(e) is ast.Starred:
                out.append(_StarredElement(self.expr(e.value)))
            else:
                out.append(_Element(_EXPR[type(e)](self, e)))
        return out

    def parse_segment(self, n: ast.expr) -> cst.BaseExpression:
        """LibCST's own parse of an expression's source text (f-strings, concatenated strings)."""
        seg = self.segment(n)
        try:
            if "\n" in seg or "\r" in seg:
                # Only parenthesized may an expression span lines; the parentheses added are dropped.
                return cst.parse_expression("(" + seg + ")").with_changes(lpar=[], rpar=[])
            return cst.parse_expression(seg)
        except cst.ParserSyntaxError as exc:  # e.g. Python 3.12 f-string syntax LibCST rejects
            raise Unsupported(f"LibCST rejects the expression: {exc.message}") from exc

    def args(self, args: list[ast.expr], keywords: list[ast.keyword]) -> list[cst.Arg]:
        out = []
        starred_late = False
        for a in args:
            if type(a) is ast.Starred:
                out.append(_Arg(self.expr(a.value), star="*", **_ARG_WS))
                starred_late = True
            else:
                out.append(_Arg(_EXPR[type(a)](self, a), **_ARG_WS))
        if keywords:
            for k in keywords:
                if k.arg is None:
                    out.append(_Arg(self.expr(k.value), star="**", **_ARG_WS))
                else:
                    out.append(_Arg(self.expr(k.value), keyword=_Name(k.arg), **_ARG_WS))
            if starred_late:
                # ast splits the arguments in two lists; `f(a=1, *b)` is legal, so source order is
                # restored from the positions (a stable sort keeps equal keys, which cannot occur).
                order = [(a.lineno, a.col_offset) for a in args]
                order += [(k.lineno, k.col_offset) for k in keywords]
                out = [arg for _, arg in sorted(zip(order, out, strict=True), key=lambda p: p[0])]
        return out

    def tuple_is_parenthesized(self, t: ast.Tuple) -> bool:
        """Whether parentheses of the tuple itself surround it (`x[(a, b)]` versus `x[a, b]`)."""
        elts = t.elts
        if not elts:
            return True
        e0 = elts[0]
        if t.lineno == e0.lineno and t.col_offset == e0.col_offset:
            return False
        # The tuple starts before its first element: by parentheses of its own, or of that element
        # (`(a), b`). Those of the element close before the first comma after it.
        before = self.text(t.lineno, t.col_offset, e0.lineno, e0.col_offset)
        if len(elts) > 1:
            e1 = elts[1]
            after = self.text(e0.end_lineno, e0.end_col_offset, e1.lineno, e1.col_offset)
        else:
            after = self.text(e0.end_lineno, e0.end_col_offset, t.end_lineno, t.end_col_offset)
        if "#" in before or "#" in after:
            raise Unsupported("comment inside a subscript's tuple")
        return before.count("(") > after.split(",", 1)[0].count(")")

    def subscript_element(self, e: ast.expr) -> cst.SubscriptElement:
        if type(e) is ast.Slice:
            return _Subscript(cst.Slice(self.opt(e.lower), self.opt(e.upper), self.opt(e.step)))
        if type(e) is ast.Starred:
            raise Unsupported("starred subscript")
        return _Subscript(_Index(_EXPR[type(e)](self, e)))

    def comp_for(self, generators: list[ast.comprehension]) -> cst.CompFor:
        inner = None
        for g in reversed(generators):
            inner = cst.CompFor(
                target=self.expr(g.target),
                iter=self.expr(g.iter),
                ifs=[cst.CompIf(self.expr(t)) for t in g.ifs],
                inner_for_in=inner,
                asynchronous=cst.Asynchronous() if g.is_async else None,
            )
        return inner

    def parameters(self, a: ast.arguments, annotated: bool = True) -> cst.Parameters:
        def param(arg: ast.arg, default: ast.expr | None, star: str) -> cst.Param:
            ann = arg.annotation
            return _Param(
                _Name(arg.arg),
                annotation=None if ann is None else _Annotation(self.expr(ann)),
                default=None if default is None else self.expr(default),
                star=star,
                **_PARAM_WS,
            )

        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
        converted = [param(arg, d, "") for arg, d in zip(positional, defaults, strict=True)]
        n_posonly = len(a.posonlyargs)
        if a.vararg is not None:
            star_arg = param(a.vararg, None, "*")
        elif a.kwonlyargs:
            star_arg = cst.ParamStar()  # a bare `*`
        else:
            star_arg = _DEFAULT
        return cst.Parameters(
            params=converted[n_posonly:],
            star_arg=star_arg,
            kwonly_params=[param(arg, d, "") for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)],
            star_kwarg=None if a.kwarg is None else param(a.kwarg, None, "**"),
            posonly_params=converted[:n_posonly],
            posonly_ind=cst.ParamSlash() if n_posonly else _DEFAULT,
        )

    def string(self, n: ast.Constant) -> cst.BaseExpression:
        seg = self.segment(n)
        if _is_one_string_token(seg):
            return _SimpleString(seg)
        return self.parse_segment(n)  # implicit concatenation: LibCST's nesting, exactly

    # -- statements --------------------------------------------------------------------------

    def statements(self, body: list[ast.stmt], indent: str) -> list[cst.BaseStatement]:
        """The statements of a block whose lines are indented by `indent` (absolute)."""
        out = []
        stmt_map = self.stmt_map
        i = 0
        n = len(body)
        while i < n:
            s = body[i]
            compound = _COMPOUND.get(type(s))
            if compound is not None:
                node = compound(self, s, indent)
                stmt_map[id(node)] = s
                out.append(node)
                i += 1
                continue
            small = [_SIMPLE[type(s)](self, s)]
            end = s.end_lineno
            i += 1
            # Statements separated by `;` share a line: each starts on the line its predecessor
            # ended (a new line needs a NEWLINE token, and a compound statement cannot follow `;`).
            while i < n and body[i].lineno == end:
                s2 = body[i]
                small.append(_SIMPLE[type(s2)](self, s2))
                end = s2.end_lineno
                i += 1
            line = _SimpleStatementLine(small, **_LINE_WS)
            stmt_map[id(line)] = s
            out.append(line)
        return out

    def suite(self, body: list[ast.stmt], parent_indent: str) -> cst.BaseSuite:
        """An IndentedBlock, or a SimpleStatementSuite when the body follows the colon."""
        first = body[0]
        line = self.lines[first.lineno - 1]
        prefix = line[: self._col(line, first.col_offset)]
        if prefix.strip(" \t"):  # code before the first statement on its line: `if x: y`
            return cst.SimpleStatementSuite([_SIMPLE[type(s)](self, s) for s in body])
        if first.lineno > 1 and _CONTINUATION_RE.search(self.lines[first.lineno - 2][-3:]):
            # `if x: \` + newline + `    y` is a suite on a continued line; rare, not worth it.
            raise Unsupported("suite on a continuation line")
        # LibCST (wrapped_tokenize): an INDENT's relative indent is the new line's indentation
        # minus as many characters as the enclosing block's; the first one is the module's
        # default_indent, and a block whose relative indent equals it stores None.
        relative = prefix[len(parent_indent) :]
        if self.default_indent is None:
            self.default_indent = relative
        return _IndentedBlock(
            self.statements(body, prefix),
            indent=None if relative == self.default_indent else relative,
            **_BLOCK_WS,
        )

    def orelse(self, orelse: list[ast.stmt], indent: str) -> cst.Else | None:
        return _Else(self.suite(orelse, indent)) if orelse else None


def _is_one_string_token(seg: str) -> bool:
    """Whether `seg` (a str/bytes literal's source) is one string token, not `'a' 'b'`."""
    i = 0
    while seg[i] not in "'\"":  # the prefix: r, b, u, rb, ...
        i += 1
    q = seg[i]
    if seg.startswith(q * 3, i):
        quote = q * 3
        start = i + 3
    else:
        quote = q
        start = i + 1
    j = start
    while True:
        k = seg.find(quote, j)
        if k < 0:
            raise Unsupported("unterminated string segment")
        b = k - 1
        while b >= start and seg[b] == "\\":
            b -= 1
        if (k - 1 - b) % 2 == 0:  # an even run of backslashes: the quote is not escaped
            return k + len(quote) == len(seg)
        j = k + 1


# -- expression converters (dispatched on type(node)) -----------------------------------------


def _name(c: _Converter, n: ast.Name) -> cst.Name:
    return _Name(n.id)


def _constant(c: _Converter, n: ast.Constant) -> cst.BaseExpression:
    v = n.value
    t = type(v)
    if t is str or t is bytes:
        return c.string(n)
    if t is int:
        return _Integer(c.segment(n))
    if t is float:
        return _Float(c.segment(n))
    if t is complex:
        return _Imaginary(c.segment(n))
    if v is None or t is bool:
        return _Name(str(v))  # LibCST has no constant nodes for True/False/None
    if v is Ellipsis:
        return cst.Ellipsis()
    raise Unsupported(f"constant {t.__name__}")


def _attribute(c: _Converter, n: ast.Attribute) -> cst.Attribute:
    return _Attribute(c.expr(n.value), _Name(n.attr), **_ATTRIBUTE_WS)


def _call(c: _Converter, n: ast.Call) -> cst.Call:
    return _Call(c.expr(n.func), c.args(n.args, n.keywords), **_CALL_WS)


def _subscript(c: _Converter, n: ast.Subscript) -> cst.Subscript:
    sl = n.slice
    if type(sl) is ast.Tuple and not c.tuple_is_parenthesized(sl):
        elements = [c.subscript_element(e) for e in sl.elts]  # `x[a, b]`: one element each
    else:
        elements = [c.subscript_element(sl)]
    return cst.Subscript(c.expr(n.value), elements, **_SUBSCRIPT_WS)


def _binop(c: _Converter, n: ast.BinOp) -> cst.BinaryOperation:
    return cst.BinaryOperation(c.expr(n.left), _BINOP[type(n.op)](), c.expr(n.right))


def _unaryop(c: _Converter, n: ast.UnaryOp) -> cst.UnaryOperation:
    return cst.UnaryOperation(_UNARYOP[type(n.op)](), c.expr(n.operand))


def _boolop(c: _Converter, n: ast.BoolOp) -> cst.BooleanOperation:
    # ast flattens `a and b and c`; LibCST nests to the left: ((a and b) and c).
    op = _BOOLOP[type(n.op)]
    values = n.values
    left = c.expr(values[0])
    for v in values[1:]:
        left = cst.BooleanOperation(left, op(), c.expr(v))
    return left


def _compare(c: _Converter, n: ast.Compare) -> cst.Comparison:
    return cst.Comparison(
        c.expr(n.left),
        [
            cst.ComparisonTarget(_CMPOP[type(op)](), c.expr(v))
            for op, v in zip(n.ops, n.comparators, strict=True)
        ],
    )


def _ifexp(c: _Converter, n: ast.IfExp) -> cst.IfExp:
    return cst.IfExp(c.expr(n.test), c.expr(n.body), c.expr(n.orelse))


def _namedexpr(c: _Converter, n: ast.NamedExpr) -> cst.NamedExpr:
    return cst.NamedExpr(c.expr(n.target), c.expr(n.value))


def _lambda(c: _Converter, n: ast.Lambda) -> cst.Lambda:
    return cst.Lambda(c.parameters(n.args), c.expr(n.body))


def _await(c: _Converter, n: ast.Await) -> cst.Await:
    return cst.Await(c.expr(n.value))


def _yield(c: _Converter, n: ast.Yield) -> cst.Yield:
    return cst.Yield(c.opt(n.value))


def _yieldfrom(c: _Converter, n: ast.YieldFrom) -> cst.Yield:
    return cst.Yield(cst.From(c.expr(n.value)))


def _tuple(c: _Converter, n: ast.Tuple) -> cst.Tuple:
    return cst.Tuple(c.elements(n.elts))


def _list(c: _Converter, n: ast.List) -> cst.List:
    return cst.List(c.elements(n.elts))


def _set(c: _Converter, n: ast.Set) -> cst.Set:
    return cst.Set(c.elements(n.elts))


def _dict(c: _Converter, n: ast.Dict) -> cst.Dict:
    out = []
    for k, v in zip(n.keys, n.values, strict=True):
        if k is None:
            out.append(cst.StarredDictElement(c.expr(v)))  # `**d`
        else:
            out.append(cst.DictElement(c.expr(k), c.expr(v)))
    return cst.Dict(out)


def _listcomp(c: _Converter, n: ast.ListComp) -> cst.ListComp:
    return cst.ListComp(c.expr(n.elt), c.comp_for(n.generators))


def _setcomp(c: _Converter, n: ast.SetComp) -> cst.SetComp:
    return cst.SetComp(c.expr(n.elt), c.comp_for(n.generators))


def _genexp(c: _Converter, n: ast.GeneratorExp) -> cst.GeneratorExp:
    return cst.GeneratorExp(c.expr(n.elt), c.comp_for(n.generators))


def _dictcomp(c: _Converter, n: ast.DictComp) -> cst.DictComp:
    return cst.DictComp(c.expr(n.key), c.expr(n.value), c.comp_for(n.generators))


def _joinedstr(c: _Converter, n: ast.JoinedStr) -> cst.BaseExpression:
    return c.parse_segment(n)  # f-strings: LibCST's FormattedString parts, exactly


def _starred(c: _Converter, n: ast.Starred) -> cst.BaseExpression:
    # Starred is converted where it may stand (elements, call arguments); anywhere else is a
    # shape not met yet.
    raise Unsupported("starred expression outside elements and arguments")


_EXPR = _Dispatch(
    {
        ast.Name: _name,
        ast.Constant: _constant,
        ast.Attribute: _attribute,
        ast.Call: _call,
        ast.Subscript: _subscript,
        ast.BinOp: _binop,
        ast.UnaryOp: _unaryop,
        ast.BoolOp: _boolop,
        ast.Compare: _compare,
        ast.IfExp: _ifexp,
        ast.NamedExpr: _namedexpr,
        ast.Lambda: _lambda,
        ast.Await: _await,
        ast.Yield: _yield,
        ast.YieldFrom: _yieldfrom,
        ast.Tuple: _tuple,
        ast.List: _list,
        ast.Set: _set,
        ast.Dict: _dict,
        ast.ListComp: _listcomp,
        ast.SetComp: _setcomp,
        ast.GeneratorExp: _genexp,
        ast.DictComp: _dictcomp,
        ast.JoinedStr: _joinedstr,
        ast.Starred: _starred,
    }
)


# -- simple statements ------------------------------------------------------------------------


def _expr_stmt(c: _Converter, s: ast.Expr) -> cst.Expr:
    return cst.Expr(c.expr(s.value))


def _assign(c: _Converter, s: ast.Assign) -> cst.Assign:
    return cst.Assign([cst.AssignTarget(c.expr(t), **_ASSIGN_TARGET_WS) for t in s.targets], c.expr(s.value))


def _augassign(c: _Converter, s: ast.AugAssign) -> cst.AugAssign:
    return cst.AugAssign(c.expr(s.target), _AUGOP[type(s.op)](), c.expr(s.value))


def _annassign(c: _Converter, s: ast.AnnAssign) -> cst.AnnAssign:
    return cst.AnnAssign(c.expr(s.target), _Annotation(c.expr(s.annotation)), c.opt(s.value))


def _return(c: _Converter, s: ast.Return) -> cst.Return:
    return cst.Return(c.opt(s.value))


def _pass(c: _Converter, s: ast.Pass) -> cst.Pass:
    return cst.Pass()


def _break(c: _Converter, s: ast.Break) -> cst.Break:
    return cst.Break()


def _continue(c: _Converter, s: ast.Continue) -> cst.Continue:
    return cst.Continue()


def _delete(c: _Converter, s: ast.Delete) -> cst.Del:
    targets = s.targets
    if len(targets) == 1:
        return cst.Del(c.expr(targets[0]))
    return cst.Del(cst.Tuple(c.elements(targets)))  # `del a, b`: LibCST's target is a tuple


def _global(c: _Converter, s: ast.Global) -> cst.Global:
    return cst.Global([cst.NameItem(_Name(name)) for name in s.names])


def _nonlocal(c: _Converter, s: ast.Nonlocal) -> cst.Nonlocal:
    return cst.Nonlocal([cst.NameItem(_Name(name)) for name in s.names])


def _assert(c: _Converter, s: ast.Assert) -> cst.Assert:
    return cst.Assert(c.expr(s.test), c.opt(s.msg))


def _raise(c: _Converter, s: ast.Raise) -> cst.Raise:
    cause = s.cause
    return cst.Raise(c.opt(s.exc), None if cause is None else cst.From(c.expr(cause)))


def _dotted(name: str) -> cst.Name | cst.Attribute:
    parts = name.split(".")
    node = _Name(parts[0])
    for p in parts[1:]:
        node = _Attribute(node, _Name(p))
    return node


def _alias(a: ast.alias) -> cst.ImportAlias:
    return cst.ImportAlias(_dotted(a.name), asname=None if a.asname is None else _AsName(_Name(a.asname)))


def _import(c: _Converter, s: ast.Import) -> cst.Import:
    return cst.Import([_alias(a) for a in s.names])


def _importfrom(c: _Converter, s: ast.ImportFrom) -> cst.ImportFrom:
    names = s.names
    return cst.ImportFrom(
        module=None if s.module is None else _dotted(s.module),
        names=cst.ImportStar() if names[0].name == "*" else [_alias(a) for a in names],
        relative=[cst.Dot() for _ in range(s.level or 0)],  # `...` is three Dots as in LibCST
    )


_SIMPLE = _Dispatch(
    {
        ast.Expr: _expr_stmt,
        ast.Assign: _assign,
        ast.AugAssign: _augassign,
        ast.AnnAssign: _annassign,
        ast.Return: _return,
        ast.Pass: _pass,
        ast.Break: _break,
        ast.Continue: _continue,
        ast.Delete: _delete,
        ast.Global: _global,
        ast.Nonlocal: _nonlocal,
        ast.Assert: _assert,
        ast.Raise: _raise,
        ast.Import: _import,
        ast.ImportFrom: _importfrom,
    }
)


# -- compound statements (given the absolute indent of the block they stand in) ---------------


def _if(c: _Converter, s: ast.If, indent: str) -> cst.If:
    orelse = s.orelse
    if not orelse:
        tail = None
    elif len(orelse) == 1 and type(orelse[0]) is ast.If and _starts_with(c, orelse[0], "elif"):
        # An `elif` is an If in the orelse, positioned at its keyword; `else:` + `if` is not.
        tail = _if(c, orelse[0], indent)
        c.stmt_map[id(tail)] = orelse[0]
    else:
        tail = _Else(c.suite(orelse, indent))
    return cst.If(c.expr(s.test), c.suite(s.body, indent), tail)


def _starts_with(c: _Converter, n: ast.AST, word: str) -> bool:
    line = c.lines[n.lineno - 1]
    return line.startswith(word, c._col(line, n.col_offset))


def _for(c: _Converter, s: ast.For | ast.AsyncFor, indent: str) -> cst.For:
    return cst.For(
        c.expr(s.target),
        c.expr(s.iter),
        c.suite(s.body, indent),
        c.orelse(s.orelse, indent),
        asynchronous=cst.Asynchronous() if type(s) is ast.AsyncFor else None,
    )


def _while(c: _Converter, s: ast.While, indent: str) -> cst.While:
    return cst.While(c.expr(s.test), c.suite(s.body, indent), c.orelse(s.orelse, indent))


def _with(c: _Converter, s: ast.With | ast.AsyncWith, indent: str) -> cst.With:
    items = []
    for item in s.items:
        var = item.optional_vars
        items.append(cst.WithItem(c.expr(item.context_expr), None if var is None else _AsName(c.expr(var))))
    return cst.With(
        items,
        c.suite(s.body, indent),
        asynchronous=cst.Asynchronous() if type(s) is ast.AsyncWith else None,
    )


def _handlers(c: _Converter, handlers: list[ast.ExceptHandler], indent: str, cls: type) -> list:
    out = []
    for h in handlers:
        out.append(
            cls(
                c.suite(h.body, indent),
                type=c.opt(h.type),
                name=None if h.name is None else _AsName(_Name(h.name)),
            )
        )
    return out


def _try_statement(kind: type, handler: type) -> Callable[[_Converter, Any, str], Any]:
    """The converter of `try` (kind cst.Try, handler cst.ExceptHandler) or `try`/`except*`
    (cst.TryStar, cst.ExceptStarHandler): the same fields, other classes."""

    def convert_try(c: _Converter, s: Any, indent: str) -> Any:
        body = c.suite(s.body, indent)
        return kind(
            body,
            handlers=_handlers(c, s.handlers, indent, handler),
            orelse=c.orelse(s.orelse, indent),
            finalbody=cst.Finally(c.suite(s.finalbody, indent)) if s.finalbody else None,
        )

    return convert_try


_try = _try_statement(cst.Try, cst.ExceptHandler)
_trystar = _try_statement(cst.TryStar, cst.ExceptStarHandler)


def _functiondef(c: _Converter, s: ast.FunctionDef | ast.AsyncFunctionDef, indent: str) -> cst.FunctionDef:
    if getattr(s, "type_params", None):  # Python 3.12's `def f[T]()`: not converted
        raise Unsupported("type parameters")
    decorators = [cst.Decorator(c.expr(d)) for d in s.decorator_list]
    params = c.parameters(s.args)
    returns = None if s.returns is None else _Annotation(c.expr(s.returns))
    return cst.FunctionDef(
        _Name(s.name),
        params,
        c.suite(s.body, indent),
        decorators=decorators,
        returns=returns,
        asynchronous=cst.Asynchronous() if type(s) is ast.AsyncFunctionDef else None,
    )


def _classdef(c: _Converter, s: ast.ClassDef, indent: str) -> cst.ClassDef:
    if getattr(s, "type_params", None):  # Python 3.12's `class A[T]`: not converted
        raise Unsupported("type parameters")
    decorators = [cst.Decorator(c.expr(d)) for d in s.decorator_list]
    # LibCST splits the arguments as ast does: positional and `*` ones are bases, `k=v` and `**`
    # ones keywords.
    bases = c.args(s.bases, [])
    keywords = c.args([], s.keywords)
    return cst.ClassDef(
        _Name(s.name), c.suite(s.body, indent), bases=bases, keywords=keywords, decorators=decorators
    )


_COMPOUND = {
    ast.If: _if,
    ast.For: _for,
    ast.AsyncFor: _for,
    ast.While: _while,
    ast.With: _with,
    ast.AsyncWith: _with,
    ast.Try: _try,
    ast.FunctionDef: _functiondef,
    ast.AsyncFunctionDef: _functiondef,
    ast.ClassDef: _classdef,
}


def _match(c: _Converter, s: ast.AST, indent: str) -> cst.Match:
    raise Unsupported("match")  # not converted (rare in ML code): the caller parses with LibCST


if hasattr(ast, "Match"):
    _COMPOUND[ast.Match] = _match
if hasattr(ast, "TryStar"):  # Python 3.11+
    _COMPOUND[ast.TryStar] = _trystar


def convert(
    tree: ast.Module, source: str, *, encoding: str = "utf-8"
) -> tuple[cst.Module, dict[int, ast.AST]]:
    """The LibCST module `libcst.parse_module(source)` gives, but for whitespace and punctuation.

    `tree` is `ast.parse(source)`; `encoding` is the Module's (LibCST's parse of bytes keeps the
    encoding their coding cookie or BOM declares; of a str, "utf-8"). Returns the module and a map from `id()` of each converted
    statement (every SimpleStatementLine, to the first ast statement on its line, and every
    compound statement, `elif` Ifs included) to its ast statement. Raises Unsupported.
    """
    if source.startswith("\ufeff"):
        raise Unsupported("byte order mark")
    cstparse._install()
    ident = threading.get_ident()
    outer = ident in cstparse._PARSING
    # Nodes built while the thread is in cstparse._PARSING skip LibCST's per-node validation (as
    # the parser's own do): these are built from a tree Python itself accepted.
    cstparse._PARSING.add(ident)
    try:
        c = _Converter(source)
        body = c.statements(tree.body, "")
    finally:
        if not outer:
            cstparse._PARSING.discard(ident)
    newline = _NEWLINE_RE.search(source)
    # As LibCST's native parser decides it (measured): a final "\n" or "\r\n" counts, a final lone
    # "\r" does not (libcst._parser.detect_config would count it), nor a "\\" + newline.
    has_trailing_newline = source.endswith("\n") and not (
        _CONTINUATION_RE.fullmatch(source[-2:]) or _CONTINUATION_RE.fullmatch(source[-3:])
    )
    module = cst.Module(
        body,
        encoding=encoding,
        default_indent="    " if c.default_indent is None else c.default_indent,
        default_newline="\n" if newline is None else newline.group(0),
        has_trailing_newline=has_trailing_newline,
    )
    return module, c.stmt_map
