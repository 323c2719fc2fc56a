import pytest

from actors.common.bar_formats import DataError
from actors.common.event_files import EventFileError
from actors.common.file_errors import FileError


def test_the_message_names_the_file_the_row_and_the_field():
    assert str(FileError("a.csv", "not a number", row=3, field="close")) == "a.csv, row 3, field 'close': not a number"
    assert str(FileError("a.csv", "empty")) == "a.csv: empty"


@pytest.mark.parametrize(("error", "text"), [
    (DataError("bars.csv", "not a price", row=2, column="low"), "bars.csv, row 2, column 'low': not a price"),
    (EventFileError("news.jsonl", "no time", row=4, field="time", unit="line"), "news.jsonl, line 4, field 'time': no time"),
])
def test_each_loader_keeps_its_own_words_and_class(error, text):
    assert str(error) == text and isinstance(error, FileError) and isinstance(error, ValueError)
    assert (error.row, error.field) == ((2, "low") if isinstance(error, DataError) else (4, "time"))
