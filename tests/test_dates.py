"""Dates of documents and their periods (countgrid._utils.dates; docs/map.md, "Time"):
every accepted spelling against the calendar, periods against a slow reference built
with the datetime module, and the errors a stranger's date column gets."""
import datetime as dt

import numpy as np
import pytest

from countgrid._utils.dates import (AUTO_MAX_PERIODS, MAX_PERIODS, choose_period,
                                    parse_dates, period_codes)


def test_iso_timestamps_objects_and_missing_values():
    got = parse_dates(["2021", "2021-03", "2021-03-04", " 2021-03-04T05:06:07 ",
                       "2021-03-04T05:06:07Z", "2021-03-04T05:06:07+02:00", "", None,
                       float("nan"), 1614834367, 1614834367.9, dt.date(2020, 2, 29),
                       dt.datetime(2020, 2, 29, 23, 59, tzinfo=dt.timezone(dt.timedelta(hours=-1))),
                       np.datetime64("2019-12-31")])
    want = ["2021-01-01T00:00:00", "2021-03-01T00:00:00", "2021-03-04T00:00:00",
            "2021-03-04T05:06:07", "2021-03-04T05:06:07", "2021-03-04T03:06:07", "NaT", "NaT",
            "NaT", "2021-03-04T05:06:07", "2021-03-04T05:06:07", "2020-02-29T00:00:00",
            "2020-03-01T00:59:00", "2019-12-31T00:00:00"]
    assert got.dtype == np.dtype("datetime64[s]")
    assert [str(v) for v in got] == want


@pytest.mark.parametrize("values", [np.array(["2021-03-04", "", "1999-12-31T23:59"]),
                                    np.array([0, 86400 * 365], dtype=np.int64),
                                    np.array([0.5, np.nan, -86400.0]),
                                    np.array(["2021-03-04", "2021-03-04"], dtype="datetime64[D]")])
def test_whole_arrays_agree_with_one_value_at_a_time(values):
    got = parse_dates(values)
    one = [parse_dates([v])[0] if not (isinstance(v, float) and np.isnan(v)) else
           np.datetime64("NaT") for v in values.tolist()]
    assert [str(a) for a in got] == [str(np.datetime64(b, "s")) for b in one]


@pytest.mark.parametrize("bad, why", [
    ("2021-13-01", "not an ISO 8601"), ("yesterday", "not an ISO 8601"),
    (True, "bool"), (1e20, "Unix timestamp"), (float("inf"), "Unix timestamp"),
    ([2021], "list"), ("9" * 50, "too long"), (b"\xff\xfe", "not ASCII")])
def test_what_is_not_a_date_names_the_argument_and_the_row(bad, why):
    with pytest.raises(ValueError, match=r"when\[1\] = .*is not a date.*" + why):
        parse_dates(np.array(["2021-01-01", bad, "2021-01-02"], dtype=object), "when")
    with pytest.raises(ValueError, match="when must be 1-D"):
        parse_dates(np.zeros((2, 2)), "when")


def reference_codes(days, period):
    """Each day's period index and the labels, with the datetime module."""
    def start(d):
        if period == "day":
            return d
        if period == "week":
            return d - dt.timedelta(days=d.weekday())
        if period == "month":
            return d.replace(day=1)
        return d.replace(month=1, day=1)

    def step(d):
        if period == "day":
            return d + dt.timedelta(days=1)
        if period == "week":
            return d + dt.timedelta(days=7)
        if period == "month":
            return (d.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
        return d.replace(year=d.year + 1)

    have = [d for d in days if d is not None]
    starts, s = [], start(min(have))
    while s <= start(max(have)):
        starts.append(s)
        s = step(s)
    codes = [-1 if d is None else starts.index(start(d)) for d in days]
    return codes, starts


@pytest.mark.parametrize("period", ["day", "week", "month", "year"])
@pytest.mark.parametrize("seed", range(4))
def test_periods_agree_with_the_calendar(period, seed):
    rng = np.random.default_rng(seed)
    span = {"day": 300, "week": 2000, "month": 9000, "year": 100000}[period]
    base = dt.date(1960, 1, 1) + dt.timedelta(days=int(rng.integers(0, 30000)))
    days = [None if rng.random() < 0.1 else base + dt.timedelta(days=int(rng.integers(0, span)))
            for _ in range(200)]
    chosen, codes, labels, starts = period_codes(parse_dates(days), period)
    want_codes, want_starts = reference_codes(days, period)
    assert chosen == period
    assert codes.tolist() == want_codes
    assert [str(s) for s in starts] == [s.isoformat() for s in want_starts]
    cut = {"day": 10, "week": 10, "month": 7, "year": 4}[period]
    assert labels == [s.isoformat()[:cut] for s in want_starts]


def test_auto_takes_the_finest_period_with_few_enough_periods():
    d = lambda *a: parse_dates([dt.date(*a[:3]), dt.date(*a[3:])])  # noqa: E731
    assert choose_period(d(2021, 1, 1, 2021, 3, 1)) == "day"        # 60 days
    assert choose_period(d(2021, 1, 1, 2021, 3, 2)) == "week"       # 61 days
    assert choose_period(d(2021, 1, 4, 2022, 2, 27)) == "week"      # 60 weeks
    assert choose_period(d(2021, 1, 1, 2025, 12, 31)) == "month"    # 60 months
    assert choose_period(d(2021, 1, 1, 2026, 1, 1)) == "year"
    assert choose_period(d(1000, 1, 1, 2026, 1, 1)) == "year"       # still years
    assert choose_period(parse_dates([None])) == "day"
    for a, b in [((2021, 1, 1), (2021, 3, 2)), ((2021, 1, 1), (2025, 12, 31))]:
        _, _, labels, _ = period_codes(parse_dates([dt.date(*a), dt.date(*b)]))
        assert len(labels) <= AUTO_MAX_PERIODS


def test_period_errors_and_the_limit():
    dates = parse_dates(["1900-01-01", "2021-01-01"])
    with pytest.raises(ValueError, match=rf"cuts the dates .* into 44196 periods, more than "
                                         rf"{MAX_PERIODS}: choose 'year'"):
        period_codes(dates, "day")
    with pytest.raises(ValueError, match="period must be one of 'auto', 'day'"):
        period_codes(dates, "hour")
    chosen, codes, labels, starts = period_codes(parse_dates(["", None]))
    assert codes.tolist() == [-1, -1] and labels == [] and starts.shape == (0,)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinity_in_a_float_array_is_refused_as_in_a_list(value):
    """Only NaN is a missing date: +-inf in a float array was taken for one (while the same
    value in a list was refused); both name the argument and the row now."""
    with pytest.raises(ValueError, match=r"when\[1\] = -?inf is not a Unix timestamp"):
        parse_dates(np.array([0.0, value, np.nan]), "when")
    with pytest.raises(ValueError, match=r"when\[1\] = .*is not a date"):
        parse_dates([0.0, value], "when")
    with pytest.raises(ValueError, match=r"when\[0\] = 1e\+300 is not a Unix timestamp"):
        parse_dates(np.array([1e300]), "when")
    got = parse_dates(np.array([0.0, np.nan]), "when")
    assert str(got[0]) == "1970-01-01T00:00:00" and np.isnat(got[1])
