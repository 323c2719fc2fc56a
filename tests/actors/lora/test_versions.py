from actors.lora.versions import VersionBook


def test_every_version_is_kept_and_a_rollback_republishes_an_old_adapter_as_a_new_version(tmp_path):
    book = VersionBook(tmp_path / "versions")
    for version, content, published in ((1, b"one", True), (2, b"two", False)):
        adapter = tmp_path / f"a{version}.gguf"
        adapter.write_bytes(content)
        book.record(version, adapter, {"match_rate_after": version / 10}, published=published)

    rolled = book.rollback(1)

    assert [(v.version, v.published) for v in book.versions()] == [(1, True), (2, False), (3, True)]
    assert rolled.version == 3 and rolled.path.read_bytes() == b"one"
    assert rolled.metrics == {"match_rate_after": 0.1, "rollback_of": 1.0}
    assert book.latest_published().version == 3
