"""Shared check of the CLI tests: a usage error is one line on stderr."""

from prune_opt.cli import EXIT_USAGE


def one_line_error(capsys, code, *needles):
    """Assert a usage exit with one stderr line, no traceback, naming every needle."""
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err
