"""The programs known to change nothing, each with every option it accepts.

Data for `readers`: an entry says which options a program takes (getopt strings, see
`getopt.options`), which of them write a file or run a program (`unsafe`), how many operands it
may have before one is a file it writes, and which options make it read files named
somewhere its words do not show (`hidden_reads`). The option lists follow the GNU tools (and
ripgrep as it is); a test walks every entry, and checks the GNU tools' own `--help` against it.
"""

from __future__ import annotations

from collections.abc import Callable

from msgspec import Struct

from .getopt import OptionSpec, options, read_options
from .shell_words import Word

Judge = Callable[[tuple[Word, ...], bool], str | None]
"""Why a program called with these arguments (and more when fed) is not read-only, or None."""


class Reader(Struct, frozen=True):
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


def set_of(*names: str) -> frozenset[str]:
    return frozenset(names)


def reader(
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


_CHECKSUM = reader(
    "bctzw",
    "binary check tag text zero ignore-missing quiet status strict warn",
    hidden_reads=("-c", "--check"),
)

READERS: dict[str, Reader] = {
    "ls": reader(
        "aAbBcCdDfF::gGhHiI:klLmnNop:qQrRsStT:uUvw:xXZ1",
        "all almost-all author escape block-size= ignore-backups color[=] directory dired "
        "classify[=] file-type format= full-time group-directories-first no-group "
        "human-readable si dereference-command-line dereference-command-line-symlink-to-dir "
        "hide= hyperlink[=] indicator-style= inode ignore= kibibytes dereference "
        "numeric-uid-gid literal hide-control-chars show-control-chars quote-name "
        "quoting-style= reverse recursive size sort= time= time-style= tabsize= width= "
        "context zero",
    ),
    "cat": reader(
        "AbeEnstTuv",
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
    ),
    "head": reader("c:n:qvz", "bytes= lines= quiet silent verbose zero-terminated", numbers=True),
    "tail": reader(
        "c:f::Fn:qs:vz",
        "bytes= follow[=] lines= max-unchanged-stats= pid= quiet silent retry "
        "sleep-interval= verbose zero-terminated",
        numbers=True,
    ),
    "wc": reader(
        "cmlLw",
        "bytes chars lines files0-from= max-line-length words total=",
        hidden_reads=("--files0-from",),
    ),
    "grep": reader(
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
    "cut": reader(
        "b:c:d:f:nszM",
        "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= "
        "zero-terminated",
    ),
    "sort": reader(
        "bdfgiMhnRrVc::C:k:mo:sS:t:T:uz",
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort "
        "random-source= reverse sort= version-sort batch-size= check[=] compress-program= "
        "debug files0-from= key= merge output= stable buffer-size= field-separator= "
        "temporary-directory= parallel= unique zero-terminated",
        unsafe=("-o", "--output", "--compress-program"),
        hidden_reads=("--files0-from",),
    ),
    "uniq": reader(
        "cdDf:is:uzw:",
        "count repeated all-repeated[=] skip-fields= group[=] ignore-case skip-chars= unique "
        "zero-terminated check-chars=",
        most_operands=1,
        numbers=True,
    ),
    "base64": reader("diw:", "decode ignore-garbage wrap="),
    "basenc": reader(
        "diw:",
        "base64 base64url base32 base32hex base16 base2msbf base2lsbf z85 decode "
        "ignore-garbage wrap=",
    ),
    "file": reader(
        "vm:zZbce:f:F:iklLhnN0pPrsSd",
        "magic-file= uncompress uncompress-noreport brief checking-printout exclude= "
        "exclude-quiet= files-from= separator= mime apple extension mime-type mime-encoding "
        "keep-going list dereference no-dereference no-buffer no-pad print0 preserve-date "
        "parameter= raw special-files no-sandbox debug",
        hidden_reads=("-f", "--files-from"),
    ),
    "diff": reader(
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
    "date": reader(
        "d:f:I::Rr:s:u",
        "date= debug file= iso-8601[=] resolution rfc-email rfc-3339= reference= set= utc "
        "universal",
        unsafe=("-s", "--set"),
    ),
    "cmp": reader("bi:ln:sv", "print-bytes ignore-initial= verbose bytes= quiet silent"),
    "comm": reader("123z", "check-order nocheck-order output-delimiter= total zero-terminated"),
    "column": reader(
        "tn:O:N:l:E:deH:R:T:W:LJr:i:p:c:o:s:xhV",
        "table table-name= table-order= table-columns= table-columns-limit= "
        "table-noextreme= table-noheadings table-header-repeat table-hide= table-right= "
        "table-truncate= table-wrap= keep-empty-lines json tree= tree-id= tree-parent= "
        "output-width= output-separator= separator= fillrows",
    ),
    "fold": reader("bsw:", "bytes spaces width="),
    "paste": reader("d:sz", "delimiters= serial zero-terminated"),
    "rev": reader("hV"),
    "tac": reader("brs:", "before regex separator="),
    "nl": reader(
        "b:d:f:h:i:l:n:ps:v:w:",
        "body-numbering= section-delimiter= footer-numbering= header-numbering= "
        "line-increment= join-blank-lines= number-format= no-renumber number-separator= "
        "starting-line-number= number-width=",
    ),
    "tr": reader("cCdst", "complement delete squeeze-repeats truncate-set1"),
    "expand": reader("it:", "initial tabs=", numbers=True),
    "unexpand": reader("at:", "all first-only tabs=", numbers=True),
    "od": reader(
        "A:j:N:S::t:vw::abcdfilosx",
        "address-radix= endian= skip-bytes= read-bytes= strings[=] format= "
        "output-duplicates width[=] traditional",
    ),
    "hexdump": reader(
        "bcCdoxL::e:f:n:s:vhV",
        "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal "
        "two-bytes-hex color[=] format= format-file= length= skip= no-squeezing",
    ),
    **dict.fromkeys(
        ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"),
        _CHECKSUM,
    ),
    "cksum": reader(
        "a:cl:zw",
        "algorithm= check length= tag untagged zero ignore-missing quiet status strict warn "
        "debug base64 raw",
        hidden_reads=("-c", "--check"),
    ),
    "du": reader(
        "0aB:bcDd:HhkLlmPSst:X:x",
        "null all apparent-size block-size= bytes total dereference-args max-depth= "
        "files0-from= human-readable inodes dereference count-links no-dereference "
        "separate-dirs si summarize threshold= time[=] time-style= exclude-from= exclude= "
        "one-file-system",
        hidden_reads=("--files0-from",),
    ),
    "df": reader(
        "aB:hHiklPt:Tx:v",
        "all block-size= human-readable si inodes local no-sync output[=] portability sync "
        "total type= print-type exclude-type=",
    ),
    "stat": reader("Lfc:t", "dereference file-system cached= format= printf= terse"),
    "readlink": reader(
        "femnqsvz",
        "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
        "verbose zero",
    ),
    "realpath": reader(
        "emLPqsz",
        "canonicalize-existing canonicalize-missing logical physical quiet relative-to= "
        "relative-base= strip no-symlinks zero",
    ),
    "basename": reader("as:z", "multiple suffix= zero"),
    "dirname": reader("z", "zero"),
    "uname": reader(
        "asnrvmpio",
        "all kernel-name nodename kernel-release kernel-version machine processor "
        "hardware-platform operating-system",
    ),
    "id": reader("aZgGnruz", "context group groups name real user zero"),
    "whoami": reader(),
    "printenv": reader("0", "null"),
    "seq": reader("f:s:w", "format= separator= equal-width"),
    "nproc": reader("", "all ignore="),
    "uptime": reader("psSV", "pretty since container raw"),
    "which": reader("a"),
    "pwd": reader("LP", "logical physical"),
    "cd": reader("LPe@", most_operands=1),
    "pushd": reader("n", most_operands=1),
    "popd": reader("n", most_operands=0),
    "dirs": reader("clpv"),
    "type": reader("afptP"),
    "rg": reader(
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
