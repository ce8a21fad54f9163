"""Programs known to change nothing, with every option each accepts and those that would.

A command is read-only when its program is in `READERS` and it is called within that entry:
every option is one the table lists for the program (read as the program reads them: an
abbreviated long option resolves to the one it names, bundled short options are split), none
is one of its `unsafe` options (those that write a file or run a program), and its operands
fit. An option the table does not know, an ambiguous one, a program not in the table: not
read-only. The table lists what is known to be safe, in the manner of Claude Code's read-only
validation, never what is known to be harmful; its option lists follow the GNU tools (and
ripgrep, git, jq as they are), so another tool's option is refused rather than guessed at.

A word known only when the line runs (an expansion, a glob) could be any option: a program
with an unsafe option, or a limit on its operands, is then not read-only. So is such a
program when it is fed more arguments from input (``xargs grep``).

Git is judged by subcommand (`git_reads`), sed by its script (`sed_script`), find by its
expression; the rest by `Reader`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .getopt import OptionSpec, options, read_options
from .git_calls import git_read_only
from .programs import WRAPPERS, unwrap
from .sed_scripts import sed_call
from .shell_syntax import Parsed
from .shell_words import SimpleCommand, Word


@dataclass(frozen=True, slots=True)
class Reader:
    """A program that reads unless given one of its `unsafe` options or too many operands."""

    spec: OptionSpec
    unsafe: frozenset[str] = frozenset()
    most_operands: int | None = None
    hidden_reads: frozenset[str] = frozenset()
    """Options that make it read files named somewhere its words do not show (a list in a
    file, ``--files0-from``): safe to run, but what it reads cannot be told."""

    @property
    def strict(self) -> bool:
        """Whether a word it does not see (a glob, an expansion, input) could make it unsafe."""
        return bool(self.unsafe) or self.most_operands is not None

    def judge(self, words: tuple[Word, ...], fed: bool) -> str | None:
        """Why a call with these arguments is not read-only; None when it is."""
        reading = read_options(self.spec, words)
        if reading.problem is not None:
            return reading.problem
        hit = next((name for name, _ in reading.options if name in self.unsafe), None)
        if hit is not None:
            return f"{hit} writes a file or runs a program"
        if self.strict and (fed or reading.dynamic):
            return "a word known only when it runs could be an option that writes"
        if self.most_operands is not None and len(reading.operands) > self.most_operands:
            return f"its operand after the first {self.most_operands} is a file it writes"
        return None


Judge = Callable[[tuple[Word, ...], bool], str | None]
"""Why a program called with these arguments (and more when fed) is not read-only, or None."""


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


def _reader(
    short: str = "",
    long: str = "",
    *,
    unsafe: tuple[str, ...] = (),
    most_operands: int | None = None,
    hidden_reads: tuple[str, ...] = (),
    numbers: bool = False,
    abbreviations: bool = True,
) -> Reader:
    spec = options(short, long + " help version", numbers=numbers, abbreviations=abbreviations)
    return Reader(spec, frozenset(unsafe), most_operands, frozenset(hidden_reads))


def _any(_words: tuple[Word, ...], _fed: bool) -> str | None:
    return None


_CHECKSUM = _reader(
    "bctzw",
    "binary check tag text zero ignore-missing quiet status strict warn",
    hidden_reads=("-c", "--check"),
)

READERS: dict[str, Reader] = {
    "ls": _reader(
        "aAbBcCdDfF::gGhHiI:klLmnNop:qQrRsStT:uUvw:xXZ1",
        "all almost-all author escape block-size= ignore-backups color[=] directory dired "
        "classify[=] file-type format= full-time group-directories-first no-group "
        "human-readable si dereference-command-line dereference-command-line-symlink-to-dir "
        "hide= hyperlink[=] indicator-style= inode ignore= kibibytes dereference "
        "numeric-uid-gid literal hide-control-chars show-control-chars quote-name "
        "quoting-style= reverse recursive size sort= time= time-style= tabsize= width= "
        "context zero",
    ),
    "cat": _reader(
        "AbeEnstTuv",
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
    ),
    "head": _reader("c:n:qvz", "bytes= lines= quiet silent verbose zero-terminated", numbers=True),
    "tail": _reader(
        "c:f::Fn:qs:vz",
        "bytes= follow[=] lines= max-unchanged-stats= pid= quiet silent retry "
        "sleep-interval= verbose zero-terminated",
        numbers=True,
    ),
    "wc": _reader(
        "cmlLw",
        "bytes chars lines files0-from= max-line-length words total=",
        hidden_reads=("--files0-from",),
    ),
    "grep": _reader(
        "EFGPe:f:iywxzsvVm:bnHhoqaId:D:rRLlcTZB:A:C:Uu",
        "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case "
        "no-ignore-case word-regexp line-regexp null-data no-messages invert-match "
        "max-count= byte-offset line-number no-line-number line-buffered with-filename "
        "no-filename label= only-matching quiet silent binary-files= text directories= "
        "devices= recursive dereference-recursive include= exclude= exclude-from= "
        "exclude-dir= files-without-match files-with-matches count initial-tab null "
        "before-context= after-context= context= group-separator= no-group-separator "
        "color[=] colour[=] binary unix-byte-offsets",
        numbers=True,
    ),
    "cut": _reader(
        "b:c:d:f:nszM",
        "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= "
        "zero-terminated",
    ),
    "sort": _reader(
        "bdfgiMhnRrVc::C:k:mo:sS:t:T:uz",
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort "
        "random-source= reverse sort= version-sort batch-size= check[=] compress-program= "
        "debug files0-from= key= merge output= stable buffer-size= field-separator= "
        "temporary-directory= parallel= unique zero-terminated",
        unsafe=("-o", "--output", "--compress-program"),
        hidden_reads=("--files0-from",),
    ),
    "uniq": _reader(
        "cdDf:is:uzw:",
        "count repeated all-repeated[=] skip-fields= group[=] ignore-case skip-chars= unique "
        "zero-terminated check-chars=",
        most_operands=1,
        numbers=True,
    ),
    "base64": _reader("diw:", "decode ignore-garbage wrap="),
    "basenc": _reader(
        "diw:",
        "base64 base64url base32 base32hex base16 base2msbf base2lsbf z85 decode "
        "ignore-garbage wrap=",
    ),
    "file": _reader(
        "vm:zZbce:f:F:iklLhnN0pPrsSd",
        "magic-file= uncompress uncompress-noreport brief checking-printout exclude= "
        "exclude-quiet= files-from= separator= mime apple extension mime-type mime-encoding "
        "keep-going list dereference no-dereference no-buffer no-pad print0 preserve-date "
        "parameter= raw special-files no-sandbox debug",
        hidden_reads=("-f", "--files-from"),
    ),
    "diff": _reader(
        "qsc::C:u::U:enyW:pF:tTlrNx:X:S:iEZbwBI:aD:d",
        "normal brief report-identical-files context[=] unified[=] ed rcs side-by-side width= "
        "left-column suppress-common-lines show-c-function show-function-line= label= "
        "expand-tabs initial-tab tabsize= suppress-blank-empty paginate recursive "
        "no-dereference new-file unidirectional-new-file ignore-file-name-case "
        "no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= "
        "ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change "
        "ignore-all-space ignore-blank-lines ignore-matching-lines= text strip-trailing-cr "
        "ifdef= old-group-format= new-group-format= unchanged-group-format= "
        "changed-group-format= line-format= old-line-format= new-line-format= "
        "unchanged-line-format= minimal horizon-lines= speed-large-files color[=] palette=",
        numbers=True,
    ),
    "date": _reader(
        "d:f:I::Rr:s:u",
        "date= debug file= iso-8601[=] resolution rfc-email rfc-3339= reference= set= utc "
        "universal",
        unsafe=("-s", "--set"),
    ),
    "cmp": _reader("bi:ln:sv", "print-bytes ignore-initial= verbose bytes= quiet silent"),
    "comm": _reader("123z", "check-order nocheck-order output-delimiter= total zero-terminated"),
    "column": _reader(
        "tn:O:N:l:E:deH:R:T:W:LJr:i:p:c:o:s:xhV",
        "table table-name= table-order= table-columns= table-columns-limit= "
        "table-noextreme= table-noheadings table-header-repeat table-hide= table-right= "
        "table-truncate= table-wrap= keep-empty-lines json tree= tree-id= tree-parent= "
        "output-width= output-separator= separator= fillrows",
    ),
    "fold": _reader("bsw:", "bytes spaces width="),
    "paste": _reader("d:sz", "delimiters= serial zero-terminated"),
    "rev": _reader("hV"),
    "tac": _reader("brs:", "before regex separator="),
    "nl": _reader(
        "b:d:f:h:i:l:n:ps:v:w:",
        "body-numbering= section-delimiter= footer-numbering= header-numbering= "
        "line-increment= join-blank-lines= number-format= no-renumber number-separator= "
        "starting-line-number= number-width=",
    ),
    "tr": _reader("cCdst", "complement delete squeeze-repeats truncate-set1"),
    "expand": _reader("it:", "initial tabs=", numbers=True),
    "unexpand": _reader("at:", "all first-only tabs=", numbers=True),
    "od": _reader(
        "A:j:N:S::t:vw::abcdfilosx",
        "address-radix= endian= skip-bytes= read-bytes= strings[=] format= "
        "output-duplicates width[=] traditional",
    ),
    "hexdump": _reader(
        "bcCdoxL::e:f:n:s:vhV",
        "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal "
        "two-bytes-hex color[=] format= format-file= length= skip= no-squeezing",
    ),
    **dict.fromkeys(
        ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"),
        _CHECKSUM,
    ),
    "cksum": _reader(
        "a:cl:zw",
        "algorithm= check length= tag untagged zero ignore-missing quiet status strict warn "
        "debug base64 raw",
        hidden_reads=("-c", "--check"),
    ),
    "du": _reader(
        "0aB:bcDd:HhkLlmPSst:X:x",
        "null all apparent-size block-size= bytes total dereference-args max-depth= "
        "files0-from= human-readable inodes dereference count-links no-dereference "
        "separate-dirs si summarize threshold= time[=] time-style= exclude-from= exclude= "
        "one-file-system",
        hidden_reads=("--files0-from",),
    ),
    "df": _reader(
        "aB:hHiklPt:Tx:v",
        "all block-size= human-readable si inodes local no-sync output[=] portability sync "
        "total type= print-type exclude-type=",
    ),
    "stat": _reader("Lfc:t", "dereference file-system cached= format= printf= terse"),
    "readlink": _reader(
        "femnqsvz",
        "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
        "verbose zero",
    ),
    "realpath": _reader(
        "emLPqsz",
        "canonicalize-existing canonicalize-missing logical physical quiet relative-to= "
        "relative-base= strip no-symlinks zero",
    ),
    "basename": _reader("as:z", "multiple suffix= zero"),
    "dirname": _reader("z", "zero"),
    "uname": _reader(
        "asnrvmpio",
        "all kernel-name nodename kernel-release kernel-version machine processor "
        "hardware-platform operating-system",
    ),
    "id": _reader("aZgGnruz", "context group groups name real user zero"),
    "whoami": _reader(),
    "printenv": _reader("0", "null"),
    "seq": _reader("f:s:w", "format= separator= equal-width"),
    "nproc": _reader("", "all ignore="),
    "uptime": _reader("psSV", "pretty since container raw"),
    "which": _reader("a"),
    "pwd": _reader("LP", "logical physical"),
    "cd": _reader("LPe@", most_operands=1),
    "pushd": _reader("n", most_operands=1),
    "popd": _reader("n", most_operands=0),
    "dirs": _reader("clpv"),
    "type": _reader("afptP"),
    "rg": _reader(
        "e:f:zsE:FivxmUPSaj:wL.g:d:t:T:uA:B:bC:hnNM:0opqr:HIcl" + "V",
        "regexp= file= pre= pre-glob= search-zip case-sensitive crlf dfa-size-limit= "
        "encoding= engine= fixed-strings ignore-case invert-match line-regexp max-count= "
        "mmap multiline multiline-dotall no-unicode null-data pcre2 regex-size-limit= "
        "smart-case stop-on-nonmatch text threads= word-regexp auto-hybrid-regex "
        "no-pcre2-unicode binary follow glob= glob-case-insensitive hidden iglob= "
        "ignore-file= ignore-file-case-insensitive max-depth= max-filesize= no-ignore "
        "no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global no-ignore-parent "
        "no-ignore-vcs no-require-git one-file-system type= type-not= type-add= type-clear= "
        "unrestricted after-context= before-context= block-buffered byte-offset color= "
        "colors= column context= context-separator= field-context-separator= "
        "field-match-separator= heading hostname-bin= hyperlink-format= include-zero "
        "line-buffered line-number no-line-number max-columns= max-columns-preview null "
        "only-matching path-separator= passthru pretty quiet replace= sort= sortr= trim "
        "vimgrep with-filename no-filename sort-files count count-matches "
        "files-with-matches files-without-match json debug no-ignore-messages no-messages "
        "stats trace files generate= no-config pcre2-version type-list no-heading "
        "no-hidden no-follow no-column no-search-zip no-text no-multiline no-pcre2 "
        "no-fixed-strings no-ignore-case no-binary no-context-separator no-messages "
        "no-max-columns-preview no-byte-offset no-mmap no-crlf no-trim no-stats",
        unsafe=("--pre", "--pre-glob", "--hostname-bin"),
        abbreviations=False,
    ),
}


# --- judged by their own grammar ----------------------------------------------------------


def _sed(words: tuple[Word, ...], fed: bool) -> str | None:
    """sed reads when it edits nothing in place and its script touches no other file."""
    if fed:
        return "it is given more arguments when it runs, which could be options"
    call = sed_call(words)
    if call is None:
        return "its options or script cannot be read"
    if call.in_place:
        return "it edits files in place"
    if call.runs or call.files:
        return "its script runs commands or reads or writes other files"
    return None


_FIND_UNSAFE = _set(
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
    "-fls",
)  # fmt: skip


def _find(words: tuple[Word, ...], fed: bool) -> str | None:
    """find reads unless its expression runs, deletes or writes (find takes no abbreviations,
    and refuses what it does not know)."""
    if fed or any(word.dynamic for word in words):
        return "a word known only when it runs could be an action that runs or deletes"
    hit = next((word.text for word in words if word.text in _FIND_UNSAFE), None)
    if hit is not None:
        return f"{hit} runs a command, deletes or writes"
    return None


def _date(words: tuple[Word, ...], fed: bool) -> str | None:
    """date reads unless told to set the clock (``-s``, or an operand other than +FORMAT)."""
    reason = READERS["date"].judge(words, fed)
    if reason is not None:
        return reason
    reading = read_options(READERS["date"].spec, words)
    if any(not operand.text.startswith("+") for operand in reading.operands):
        return "an operand other than +FORMAT sets the clock"
    return None


_XXD_VALUES = _set("-c", "-cols", "-g", "-groupsize", "-l", "-len", "-s", "-seek", "-o",
                   "-offset", "-n", "-name", "-R")  # fmt: skip
_XXD_FLAGS = _set(
    "-a", "-autoskip", "-b", "-bits", "-C", "-capitalize", "-d", "-e", "-E", "-EBCDIC", "-h",
    "-help", "-i", "-include", "-p", "-ps", "-postscript", "-plain", "-u", "-v", "-version",
    "-r", "-revert",
)  # fmt: skip


def _xxd(words: tuple[Word, ...], fed: bool) -> str | None:
    """xxd reads when it has one input at most (a second operand is a file it writes); its
    options are single-dash words it matches whole here."""
    if fed or any(word.dynamic for word in words):
        return "a word known only when it runs could be a file it writes"
    operands = 0
    index = 0
    while index < len(words):
        text = words[index].text
        if text in _XXD_VALUES:
            index += 2
            continue
        if any(text.startswith(v) and text[len(v) :].isdigit() for v in ("-c", "-g", "-l")):
            index += 1
            continue
        if text.startswith("-") and text != "-" and text not in _XXD_FLAGS:
            return f"{text} is not an option it is known to take"
        operands += not text.startswith("-") or text == "-"
        index += 1
    return None if operands <= 1 else "its second operand is a file it writes"


_JQ_ONE = _set(
    "-c", "-n", "-e", "-s", "-r", "-j", "-a", "-S", "-C", "-M", "-R", "-h", "-V", "--tab",
    "--compact-output", "--null-input", "--exit-status", "--slurp", "--raw-output",
    "--raw-output0", "--join-output", "--ascii-output", "--sort-keys", "--color-output",
    "--monochrome-output", "--raw-input", "--seq", "--stream", "--stream-errors", "--help",
    "--version", "--unbuffered", "--args", "--jsonargs", "--build-configuration",
)  # fmt: skip
_JQ_VALUE = _set("--indent", "-f", "--from-file", "-L", "--library-path")
_JQ_PAIR = _set("--arg", "--argjson", "--slurpfile", "--rawfile")


def _jq(words: tuple[Word, ...], fed: bool) -> str | None:
    """jq reads: it has no option that writes or runs a program (its options are matched
    whole, as jq does, bundles of one-letter flags split)."""
    index = 0
    while index < len(words):
        text = words[index].text
        if words[index].dynamic or text in ("--args", "--jsonargs"):
            return None  # the rest are operands (and no operand makes jq write or run)
        if text in _JQ_PAIR:
            index += 3
            continue
        if text in _JQ_VALUE:
            index += 2
            continue
        if text.startswith("--") and text not in _JQ_ONE:
            return f"{text} is not an option it is known to take"
        short = text.startswith("-") and len(text) > 1 and not text.startswith("--")
        if short and any(f"-{letter}" not in _JQ_ONE for letter in text[1:]):
            return f"{text} is not an option it is known to take"
        index += 1
    return None


def _tree(words: tuple[Word, ...], fed: bool) -> str | None:
    return _TREE.judge(words, fed)


_TREE = _reader(
    "adlfxL:P:I:pshugDFqNQrtcUvCAnSiJX",
    "gitignore noreport dirsfirst filesfirst prune matchdirs ignore-case du charset= "
    "filelimit= sort= info timefmt= fflinks hyperlink",
    numbers=False,
)


def _wrapper(name: str) -> Judge:
    """A wrapper reads when its own options are ones the table knows and none makes it do
    more than run its command (``time -o`` writes a file); what it runs is judged on its own."""
    wrapper = WRAPPERS[name]

    def judge(words: tuple[Word, ...], fed: bool) -> str | None:
        unwrapped = unwrap(SimpleCommand((Word(name), *words), fed=fed), wrapper)
        if unwrapped.reason is not None:
            return unwrapped.reason
        reading = read_options(wrapper.spec, words)
        changing = next((name for name, _ in reading.options if name in wrapper.changes), None)
        return None if changing is None else f"{changing} makes it write a file"

    return judge


JUDGES: dict[str, Judge] = {
    **{name: reader.judge for name, reader in READERS.items()},
    **{
        name: _wrapper(name)
        for name in ("env", "command", "nice", "timeout", "stdbuf", "time", "xargs")
    },
    "git": git_read_only,
    "sed": _sed,
    "find": _find,
    "date": _date,
    "xxd": _xxd,
    "jq": _jq,
    "tree": _tree,
    **dict.fromkeys(("echo", "printf", "true", "false", ":", "test", "[", "sleep", "ps"), _any),
}
"""Every program the table knows, by name. Builtins that take any words (``echo``, ``test``)
and ``ps`` (whose options neither write nor run anything) accept whatever they are given."""


HARMLESS_ASSIGNMENT = re.compile(r"^(?:LANG|LC_[A-Z]+|TZ|NO_COLOR|COLUMNS|TERM)=")
"""Variables a read-only command may be given: locale, time zone and display only (others,
such as GIT_EXTERNAL_DIFF or LD_PRELOAD, can make a program run something else)."""


def command_judgement(command: SimpleCommand) -> str | None:
    """Why one simple command (not what it wraps) is not read-only; None when it is."""
    assignment = next((a for a in command.assignments if not HARMLESS_ASSIGNMENT.match(a)), None)
    if assignment is not None:
        return f"{assignment.split('=', 1)[0]} can change what the program runs"
    if not command.words:
        return None
    name = command.words[0].text
    judge = JUDGES.get(name)
    if judge is None:
        return f"{name} is not a program known to only read"
    reason = judge(command.words[1:], command.fed)
    return None if reason is None else f"{name}: {reason}"


def line_judgement(parsed: Parsed) -> str | None:
    """Why a parsed command line is not read-only; None when everything it runs only reads
    and it redirects output into no file."""
    if parsed.hidden:
        return parsed.hidden[0]
    if parsed.writes:
        return f"it writes {parsed.writes[0]}"
    moved = False
    for command in parsed.every_command():
        reason = command_judgement(command)
        if reason is not None:
            return reason
        moved = moved or command.program in ("cd", "pushd", "popd")
        if moved and command.program == "git":
            return "git after cd could find another repository, whose config it would run"
    return None
