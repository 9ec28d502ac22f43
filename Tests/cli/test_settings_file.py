"""`--settings FILE` (docs/HTTP.md, "Running it"): every option of the command line is taken in a
settings file with the same meaning, on/off ones as `X` and as `no-X`; a key given twice is refused,
naming it; a relative path in the file is the file's folder's. Runs the binary of LIVEBIND_SERVER
(else .build/release/livebind-server): `pytest -q Tests/cli/test_settings_file.py`.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))

import livebind_server  # noqa: E402

BINARY = livebind_server.server_binary()
# An option after the file that the parser refuses: reaching it means the file was taken whole.
STOP = ["--port", "-1"]
STOPPED = "--port must be 0 to 65535, not -1"


def options():
    """(flag, value name or None) of every option --help lists, but --help and --version."""
    text = subprocess.run([BINARY, "--help"], capture_output=True, text=True, timeout=30).stdout
    found = re.findall(r"^  --([a-z0-9-]+)(?: ([A-Z]+))?", text, re.MULTILINE)
    listed = [(flag, unit or None) for flag, unit in found if flag not in ("help", "version")]
    assert len(listed) > 40, text
    return listed


def run(arguments, cwd=None):
    """(exit status, the first line of standard error) of a start with `arguments`."""
    done = subprocess.run([BINARY] + arguments, capture_output=True, text=True, timeout=30, cwd=cwd)
    return done.returncode, (done.stderr.splitlines() or [""])[0]


def from_file(tmp_path, members, name="settings.json"):
    path = tmp_path / name
    path.write_text(members if isinstance(members, str) else json.dumps(members))
    return run(["--settings", str(path)] + STOP)


def without_file(error):
    """An error as the command line words it (a file's adds where it was)."""
    return re.sub(r" \(in --settings '[^']*'\)", "", error)


OPTIONS = options()


@pytest.mark.parametrize("flag,unit", [option for option in OPTIONS if option[1] is None],
                         ids=[option[0] for option in OPTIONS if option[1] is None])
def test_an_on_off_option_is_taken_in_a_file_as_on_the_command_line(tmp_path, flag, unit):
    for line, members in [([f"--{flag}"], {flag: True}), ([f"--{flag}=off"], {flag: False}),
                          ([f"--no-{flag}"], {f"no-{flag}": True}), ([f"--{flag}=on"], {f"no-{flag}": False})]:
        assert run(line + STOP) == (64, "Error: " + STOPPED), line
        assert from_file(tmp_path, members) == (64, "Error: " + STOPPED), members


@pytest.mark.parametrize("flag,unit", [option for option in OPTIONS if option[1] is not None and option[0] != "settings"],
                         ids=[option[0] for option in OPTIONS if option[1] is not None and option[0] != "settings"])
def test_an_option_with_a_value_is_taken_in_a_file_as_on_the_command_line(tmp_path, flag, unit):
    # A value it takes (the file is read whole) and values it may refuse: the same answer either way.
    for value in ["1", "x", ""]:
        expected = run([f"--{flag}", value] + STOP)
        status, error = from_file(tmp_path, {flag: value})
        assert (status, without_file(error)) == expected, (flag, value)


def test_a_key_given_twice_is_refused_naming_it(tmp_path):
    # A JSON parser keeps the last: this would start with public reads.
    status, error = from_file(tmp_path, '{"private": true, "max-window": 5, "private": false}')
    assert status == 64 and "private is given twice" in error, error
    status, error = from_file(tmp_path, '{"token": ["a", "b"], "tok\\u0065n": "c"}')
    assert status == 64 and "token is given twice" in error, error
    # The same names inside a value are no keys of the file.
    status, error = from_file(tmp_path, '{"token": ["private", "private"], "private": true}')
    assert (status, error) == (64, "Error: " + STOPPED), error


def test_no_demo_in_a_file_turns_the_demo_off(tmp_path):
    settings = tmp_path / "settings.json"
    for members, demo in [({"no-demo": True}, False), ({"demo": False}, False), ({"no-demo": False}, True)]:
        settings.write_text(json.dumps(members))
        with livebind_server.Server(["--settings", str(settings)]) as server:
            answer = server.request("GET", "/models")
            names = [model["name"] for model in answer.json()["models"]]
            assert bool(names) == demo, (members, names)


def test_relative_paths_in_a_file_are_the_files_folders(tmp_path):
    folder = tmp_path / "etc"
    elsewhere = tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / "models.json").write_text(json.dumps({"models": {"beside": {"x": 1}}, "bindings": []}))
    (folder / "settings.json").write_text(json.dumps({"config": "models.json", "data": "state"}))
    # Started from another folder, with the settings file named relative to it.
    with livebind_server.Server(["--settings", "../etc/settings.json"], cwd=str(elsewhere)) as server:
        assert server.request("GET", "/models/beside/x").json() == 1
    assert (folder / "state").is_dir() and not (elsewhere / "state").exists()
    assert not (elsewhere / "models.json").exists()
