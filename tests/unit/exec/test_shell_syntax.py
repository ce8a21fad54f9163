"""The shell parse finds every simple command a line runs, and says what it cannot see."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest

from stayer.exec.shell_syntax import Parsed, SimpleCommand, Word, parse


@dataclass(frozen=True)
class Seen:
    """What a test expects of a line: every command it runs (wrapped ones included, as lines),
    whether it is opaque, and its write targets."""

    commands: tuple[str, ...]
    opaque: bool = False
    writes: tuple[str, ...] = ()


def seen(command: str) -> Seen:
    parsed = parse(command)
    lines = tuple(simple.line for simple in parsed.every_command())
    return Seen(lines, bool(parsed.hidden), parsed.writes)


CASES: list[tuple[str, Seen]] = [
    # lists, pipelines and operators
    ("ls", Seen(("ls",))),
    ("git status && ls -la", Seen(("git status", "ls -la"))),
    ("git status || ls; pwd", Seen(("git status", "ls", "pwd"))),
    ("git status & touch X", Seen(("git status", "touch X"))),
    ("git log | head -5 |& cat", Seen(("git log", "head -5", "cat"))),
    ("git status\nrm -rf x", Seen(("git status", "rm -rf x"))),
    ("! grep -q x f", Seen(("grep -q x f",))),
    # quoting
    ("git commit -m 'a; b' && ls", Seen(("git commit -m a; b", "ls"))),
    ('echo "a  b" c\\ d', Seen(("echo a  b c d",))),
    ('echo "say \\"hi\\" \\$HOME"', Seen(('echo say "hi" $HOME',))),
    ("echo 'it''s'", Seen(("echo its",))),
    ("echo x#y # a comment; rm z", Seen(("echo x#y",))),
    ("git status #\ntouch X", Seen(("git status", "touch X"))),
    ("echo 'unbalanced", Seen(("echo",), opaque=True)),
    # substitutions, subshells, groups
    ('echo "$(git rev-parse HEAD)"', Seen(('echo "$(git rev-parse HEAD)"', "git rev-parse HEAD"))),
    ("echo `date`", Seen(("echo `date`", "date"))),
    ("echo $(ls $(pwd))", Seen(("echo $(ls $(pwd))", "ls $(pwd)", "pwd"))),
    ("(cd src && make)", Seen(("cd src", "make"))),
    ("{ git status; touch X; }", Seen(("git status", "touch X"))),
    ("diff <(sort a) <(sort b)", Seen(("diff <(sort a) <(sort b)", "sort a", "sort b"))),
    ("ls > >(tee log.txt)", Seen(("ls", "tee log.txt"))),
    ("x=$(whoami); echo $x", Seen(("whoami", "echo $x"))),
    ("if test -f a; then cat a; else echo no; fi", Seen(("test -f a", "cat a", "echo no"))),
    ("for f in *.py; do wc -l $f; done", Seen(("wc -l $f",))),
    ("while read l; do echo $l; done < in.txt", Seen(("read l", "echo $l"))),
    ("case $x in a) ls;; *) pwd;; esac", Seen(("ls", "pwd"))),
    ("[[ -f a ]] && cat a", Seen(("cat a",))),
    # redirections
    ("git status 2>&1 >/dev/null", Seen(("git status",))),
    ("ls &>/dev/null; ls 2>/dev/stderr", Seen(("ls", "ls"))),
    ("git status > ~/.bashrc", Seen(("git status",), writes=("~/.bashrc",))),
    ("echo a >> log; echo b &> out; echo c >| f", Seen(("echo a", "echo b", "echo c"),
                                                     writes=("log", "out", "f"))),
    ("ls >& both.txt", Seen(("ls",), writes=("both.txt",))),
    ('echo x > "$target"', Seen(("echo x",), writes=('"$target"',))),
    ("> empty.txt", Seen((), writes=("empty.txt",))),
    ("exec 3> fd.txt", Seen(("exec",), writes=("fd.txt",))),
    ("sort < in.txt 2>&-", Seen(("sort",))),
    ("cat <<< 'text'", Seen(("cat",))),
    ("cat <<EOF\n$(rm x)\nEOF", Seen(("cat", "rm x"))),  # an unquoted here-doc runs it
    ("cat <<'EOF'\n$(rm x)\nEOF", Seen(("cat",))),  # a quoted one does not
    # what cannot be seen through
    ("eval ls", Seen(("eval ls",), opaque=True)),
    ("source ./env.sh", Seen(("source ./env.sh",), opaque=True)),
    (". ./env.sh && ls", Seen((". ./env.sh", "ls"), opaque=True)),
    ("$CMD arg", Seen(("$CMD arg",), opaque=True)),
    ("${TOOL:-rm} x", Seen(("${TOOL:-rm} x",), opaque=True)),
    ("$(echo rm) x", Seen(("$(echo rm) x", "echo rm"), opaque=True)),
    ("bash -c 'rm x'", Seen(("bash -c rm x",), opaque=True)),
    ("sh -ec 'ls'", Seen(("sh -ec ls",), opaque=True)),
    ("curl -s x | sh", Seen(("curl -s x", "sh"), opaque=True)),
    ("bash <<EOF\nrm x\nEOF", Seen(("bash",), opaque=True)),
    ("bash ./build.sh", Seen(("bash ./build.sh",))),  # a script file is a program like any
    # ... unless the same line may have written it
    ("printf 'x' > r.sh; sh r.sh", Seen(("printf x", "sh r.sh"), opaque=True,
                                        writes=("r.sh",))),
    ("cp /usr/bin/curl c && ./c x", Seen(("cp /usr/bin/curl c", "./c x"), opaque=True)),
    ("curl -o i.py u && python3 i.py", Seen(("curl -o i.py u", "python3 i.py"), opaque=True)),
    ("make && ./build/app", Seen(("make", "./build/app"))),
    ("f() { rm x; }; f", Seen(("rm x", "f"), opaque=True)),
    ("echo $((i++))", Seen(("echo $((i++))",), opaque=True)),
    ("echo $((n = 3))", Seen(("echo $((n = 3))",), opaque=True)),
    ("echo $((1 + 2))", Seen(("echo $((1 + 2))",))),
    ("(( count += 1 ))", Seen((), opaque=True)),
    ("echo ${x@P}", Seen(("echo ${x@P}",), opaque=True)),
    ("trap 'rm x' EXIT", Seen(("trap rm x EXIT",), opaque=True)),
    ("PATH=/tmp/evil; ls", Seen(("ls",), opaque=True)),
    ("export LD_PRELOAD=x.so", Seen(("export LD_PRELOAD=x.so",), opaque=True)),
    ("name=world; echo $name", Seen(("echo $name",))),
    ("ls <> both", Seen(("ls",), opaque=True)),  # tree-sitter-bash has no `<>`: fail closed
    ("ls )", Seen(("ls",), opaque=True)),
    # wrappers: the wrapped command is found too
    ("FOO=1 rm x", Seen(("FOO=1 rm x",))),
    ("env -i A=1 B=2 rm x", Seen(("env -i A=1 B=2 rm x", "A=1 B=2 rm x"))),
    ("env", Seen(("env",))),
    # PATH chooses which program runs: what runs is not what the words name
    ("env - PATH=/x rm x", Seen(("env - PATH=/x rm x", "PATH=/x rm x"), opaque=True)),
    ("env -S 'rm x'", Seen(("env -S rm x", "rm x"))),  # the string is split into a command
    ("env --sp='sh -c ls'", Seen(("env --sp=sh -c ls", "sh -c ls"), opaque=True)),
    ("env -vS'rm x'", Seen(("env -vSrm x", "rm x"))),
    ("env --uns X rm x", Seen(("env --uns X rm x", "rm x"))),  # --unset takes X
    ("timeout --sig KILL 5 rm x", Seen(("timeout --sig KILL 5 rm x", "rm x"))),
    ("nice --adj 5 rm x", Seen(("nice --adj 5 rm x", "rm x"))),
    ("stdbuf --out L rm x", Seen(("stdbuf --out L rm x", "rm x"))),
    ("xargs --arg f rm", Seen(("xargs --arg f rm", "rm"))),
    ("timeout --bogus 5 rm x", Seen(("timeout --bogus 5 rm x",), opaque=True)),
    ("env --s rm x", Seen(("env --s rm x", "rm x"))),  # --split-string=rm, then x
    ("env --i rm x", Seen(("env --i rm x",), opaque=True)),  # ambiguous: --ignore-…
    ("setsid -f rm x", Seen(("setsid -f rm x", "rm x"))),
    ("flock /tmp/l rm x", Seen(("flock /tmp/l rm x", "rm x"))),
    ("flock -c 'rm x' /tmp/l", Seen(("flock -c rm x /tmp/l",), opaque=True)),
    ("taskset -c 0 rm x", Seen(("taskset -c 0 rm x", "rm x"))),
    ("ionice -c3 rm x", Seen(("ionice -c3 rm x", "rm x"))),
    ("unshare -r rm x", Seen(("unshare -r rm x",), opaque=True)),
    ("script -qc 'rm x'", Seen(("script -qc rm x",), opaque=True)),
    ("python3 -c 'import os'", Seen(("python3 -c import os",), opaque=True)),
    ("python3 build.py", Seen(("python3 build.py",))),
    ("python3 --version", Seen(("python3 --version",))),  # says what it is, reads no code
    ("bash /dev/stdin <<< x", Seen(("bash /dev/stdin",), opaque=True)),  # its input is code
    ("HOME=h git status", Seen(("HOME=h git status",), opaque=True)),  # h/.gitconfig runs
    ("python3 -v", Seen(("python3 -v",), opaque=True)),  # verbose: code from its input
    ("python3 < x.py", Seen(("python3",), opaque=True)),
    ("node -e 'x'", Seen(("node -e x",), opaque=True)),
    ("perl -ne 'print' f", Seen(("perl -ne print f",), opaque=True)),
    ("awk '{print}' f", Seen(("awk {print} f",), opaque=True)),
    ("find . -exec {} \\;", Seen(("find . -exec {} ;", "{}"), opaque=True)),
    ("ls | xargs -I{} {} x", Seen(("ls", "xargs -I{} {} x"), opaque=True)),
    ("ls | xargs env", Seen(("ls", "xargs env", "env"), opaque=True)),
    ("command rm x; command -v rm", Seen(("command rm x", "rm x", "command -v rm"))),
    ("sudo -u bob rm -rf /", Seen(("sudo -u bob rm -rf /", "rm -rf /"))),
    ("sudo -s", Seen(("sudo -s",), opaque=True)),
    ("nice -n 5 nohup rm x", Seen(("nice -n 5 nohup rm x", "nohup rm x", "rm x"))),
    ("nice -5 ls", Seen(("nice -5 ls", "ls"))),
    ("timeout -s KILL 10s make", Seen(("timeout -s KILL 10s make", "make"))),
    # $T might hold options, which would move where the command starts
    ("timeout $T make", Seen(("timeout $T make",), opaque=True)),
    ("time -p make", Seen(("time -p make", "make"))),
    ("stdbuf -oL grep x", Seen(("stdbuf -oL grep x", "grep x"))),
    ("ls | xargs -n1 -I{} rm {}", Seen(("ls", "xargs -n1 -I{} rm {}", "rm {}"))),
    ("ls | xargs -0 sh -c 'rm $1'", Seen(("ls", "xargs -0 sh -c rm $1", "sh -c rm $1"),
                                         opaque=True)),
    ("ls | xargs", Seen(("ls", "xargs"))),
    ("find . -name '*.o' -exec rm {} \\;", Seen(("find . -name *.o -exec rm {} ;", "rm {}"))),
    ("find . -execdir mv {} x +", Seen(("find . -execdir mv {} x +", "mv {} x"))),
    ("sudo env FOO=1 nice rm x", Seen(("sudo env FOO=1 nice rm x", "env FOO=1 nice rm x",
                                       "FOO=1 nice rm x", "rm x"))),
    ("sudo $X rm", Seen(("sudo $X rm",), opaque=True)),
    ("command eval x", Seen(("command eval x", "eval x"), opaque=True)),
    ("coproc rm x", Seen(("coproc rm x", "rm x"))),
    # quoting inside a command name hides nothing
    ("\\rm x; r''m y; \"rm\" z", Seen(("rm x", "rm y", "rm z"))),
    # line continuations
    ("ls \\\n  -la", Seen(("ls -la",))),
    ("git status\\\n; touch X", Seen(("git status", "touch X"))),
    ("git status $\\\n(touch X)", Seen(("git status $\\\n", "touch X"), opaque=True)),
    ("ls status\\\n--short", Seen(("ls status --short",), opaque=True)),  # bash: status--short
    ("echo a # note \\\nrm x", Seen(("echo a", "rm x"), opaque=True)),
    # unicode
    ("echo 'héllo wörld' ✓ && grep -c 日本 f", Seen(("echo héllo wörld ✓", "grep -c 日本 f"))),
]  # fmt: skip


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[case[0] for case in CASES])
def test_the_parse_finds_every_command_and_what_it_cannot_see(command: str, expected: Seen) -> None:
    assert seen(command) == expected


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 40


def test_words_know_whether_their_value_is_fixed() -> None:
    (command,) = parse("""grep -e 'a b' "$PAT" *.py "*.md" x{1,2} ~/notes [ab] \\*""").commands
    assert command == SimpleCommand(
        (
            Word("grep"),
            Word("-e"),
            Word("a b"),
            Word('"$PAT"', dynamic=True),
            Word("*.py", dynamic=True),  # a glob: the files decide
            Word("*.md"),
            Word("x{1,2}", dynamic=True),  # brace expansion
            Word("~/notes"),
            Word("[ab]", dynamic=True),
            Word("*"),
        )
    )


def test_wrapped_commands_hang_off_their_wrapper() -> None:
    (nice,) = parse("nice -n 5 ls -l").commands
    assert nice.runs == (SimpleCommand((Word("ls"), Word("-l"))),) and nice.transparent
    (xargs,) = parse("xargs grep -l x").commands
    assert xargs.runs == (SimpleCommand((Word("grep"), Word("-l"), Word("x")), fed=True),)
    assert not xargs.transparent
    (sudo,) = parse("sudo -l").commands
    assert sudo.runs == ()


def test_opaque_reasons_say_what_was_not_seen() -> None:
    assert parse("$CMD x").opaque == ("the command name $CMD is known only when it runs",)
    assert parse("eval ls; sh").code == (
        "eval runs text or commands its words do not show",
        "sh runs shell code it is given",
    )
    assert parse("ls )").opaque == ("the command does not parse as shell",)


def test_npm_settings_that_choose_what_its_scripts_run_are_code() -> None:
    assert parse("npm run test --scr=/tmp/x").code == (
        "npm --script-shell runs the command it is given",
    )
    assert parse("npm_config_script_shell=/tmp/x npm run test").code == (
        "npm_config_script_shell chooses a program or code that runs",
    )
    assert parse("npm run test --silent -- --script-shell=x").code == ()


def test_an_empty_line_runs_nothing() -> None:
    assert parse("") == Parsed()
    assert parse("  # only a comment\n") == Parsed()


def test_a_deeply_nested_line_fails_closed() -> None:
    command = "echo " + "$(" * 2000 + "ls" + ")" * 2000
    assert parse(command).opaque


def test_parsing_loads_tree_sitter_only_when_asked() -> None:
    probe = (
        "import sys, stayer.exec.shell_syntax, stayer.permissions, stayer.tools.builtin.bash;"
        "print('tree_sitter' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_the_parser_and_command_tables_load_with_the_first_command_not_at_start_up() -> None:
    # tests/e2e/test_startup_imports.py pins the whole start-up path of the real CLI.
    probe = (
        "import sys, stayer.session.session, stayer.permissions;"
        "print(sorted(m for m in sys.modules if m.startswith('stayer.exec.') and m.split('.')[-1]"
        " in ('shell_syntax', 'shell_words', 'evaluations', 'readers', 'reader_table',"
        " 'programs', 'getopt', 'hidden_runs', 'git_calls', 'sed_scripts')))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


def test_stayer_version_does_not_load_tree_sitter() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "stayer", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "stayer" in result.stdout
    assert "tree_sitter" not in result.stderr
    assert "shell_syntax" not in result.stderr
