"""Where the cells' Ray client finds the head's token, when it turns token mode on, and what a failed join says."""

from __future__ import annotations

import os

import pytest

from actors.jobs.cells import ray_auth
from actors.jobs.cells.ray_auth import connect_error, token_source, use_token_if_found


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(ray_auth, "_refresh_ray_config", lambda: None)  # this process may hold a Ray of its own
    return tmp_path


def write_token(home, text="abc123"):
    (home / ".ray").mkdir(exist_ok=True)
    (home / ".ray" / "auth_token").write_text(text)
    return str(home / ".ray" / "auth_token")


def test_the_default_token_file_is_found_and_turns_token_mode_on(home):
    path = write_token(home)
    assert token_source() == path
    assert use_token_if_found() == path and os.environ["RAY_AUTH_MODE"] == "token"


def test_without_a_token_nothing_is_turned_on(home):
    assert token_source() is None
    assert use_token_if_found() is None and "RAY_AUTH_MODE" not in os.environ


def test_an_empty_token_file_counts_as_none(home):
    write_token(home, "  \n")
    assert token_source() is None


def test_ray_order_the_variable_then_the_named_file_then_the_default(home, monkeypatch):
    write_token(home)
    other = home / "other_token"
    other.write_text("xyz")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(other))
    assert token_source() == str(other)
    monkeypatch.setenv("RAY_AUTH_TOKEN", "secret")
    assert token_source() == "$RAY_AUTH_TOKEN"  # named, never the token itself


def test_a_named_token_file_that_is_missing_is_no_token_even_with_a_default_one(home, monkeypatch):
    write_token(home)
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(home / "missing"))
    assert token_source() is None


def test_ray_auth_mode_disabled_is_obeyed_even_with_a_token(home, monkeypatch):
    write_token(home)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    assert use_token_if_found() is None and os.environ["RAY_AUTH_MODE"] == "disabled"


def test_a_refused_join_names_the_head_the_token_places_and_what_each_worker_node_needs(home):
    cause = RuntimeError("Failed to connect to GCS. Last connection error: Unauthenticated: RPC error: InvalidAuthToken")
    error = ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379")
    error.__cause__ = cause
    text = connect_error("10.0.0.5:6379", error, None)
    assert text.startswith("cannot join the Ray cluster at 10.0.0.5:6379 (ConnectionError: Failed to connect")
    assert "The head refused" in text and "no token was found here" in text and str(home / ".ray" / "auth_token") in text
    assert "RAY_AUTH_TOKEN_PATH=FILE" in text and "RAY_AUTH_MODE=token .venv/bin/ray start --address 10.0.0.5:6379" in text
    assert "ray status" not in text  # the head answered: the address is right


def test_a_join_that_fails_for_another_reason_also_says_to_check_the_address(home):
    text = connect_error("10.0.0.5:6379", ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379"), "/t")
    assert "If the head uses token authentication" in text and "the token from /t was sent" in text
    assert "ray status --address 10.0.0.5:6379" in text


def test_a_client_with_auth_mode_disabled_is_told_it_sent_no_token(home, monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    assert "RAY_AUTH_MODE=disabled is set here" in connect_error("h:1", ConnectionError("x"), None)
