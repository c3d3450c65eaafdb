"""Dates of documents and the periods they fall in (docs/map.md, "Time").

A date column comes from a stranger's file: ISO 8601 strings (``2021``, ``2021-03``,
``2021-03-04``, ``2021-03-04T05:06:07``, with ``Z`` or a UTC offset), Unix timestamps in
seconds, ``datetime``/``date`` objects or numpy ``datetime64`` values.  Empty strings,
None, NaN and NaT are "no date"; anything else is a ValueError naming the argument and
the first row that is not a date.
"""
import datetime as _dt
import warnings
from numbers import Real

import numpy as np

__all__ = ["PERIODS", "MAX_PERIODS", "AUTO_MAX_PERIODS", "parse_dates", "choose_period",
           "period_codes"]

#: The periods, finest first.
PERIODS = ("day", "week", "month", "year")
#: ``period="auto"`` takes the finest period giving at most this many periods.
AUTO_MAX_PERIODS = 60
#: At most this many periods between the first and the last date (a coarser period
#: otherwise): every period costs a row of cell masses in the map.
MAX_PERIODS = 1000
_NAT = np.datetime64("NaT", "s")
# numpy reads 1970-01-01 as day 0, a Thursday: day d's week starts on Monday d - (d + 3) % 7
_MONDAY_SHIFT = 3
_UNIT = {"month": "datetime64[M]", "year": "datetime64[Y]"}
#: A period's label: its first day (day, week), cut to the month or the year
_LABEL_CHARS = {"day": 10, "week": 10, "month": 7, "year": 4}
#: Timestamps beyond about year 9900 are not Unix seconds
_MAX_TIMESTAMP = 2.5e11


def _missing(v):
    return v is None or (isinstance(v, str) and not v.strip()) or \
        (isinstance(v, (float, np.floating)) and np.isnan(v))


def _one(v):
    """One value as datetime64[s] (NaT when missing); ValueError when it is not a date."""
    if _missing(v):
        return _NAT
    if isinstance(v, np.datetime64):
        return v.astype("datetime64[s]")
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return np.datetime64(v, "s")
    if isinstance(v, _dt.date):
        return np.datetime64(v, "D").astype("datetime64[s]")
    if isinstance(v, (bool, np.bool_)):
        raise ValueError("a bool is not a date")
    if isinstance(v, Real):
        x = float(v)
        if not np.isfinite(x) or abs(x) > _MAX_TIMESTAMP:
            raise ValueError(f"{v!r} is not a Unix timestamp in seconds")
        return np.datetime64(int(np.floor(x)), "s")
    if isinstance(v, bytes):
        try:
            v = v.decode("ascii")
        except UnicodeDecodeError:
            raise ValueError("bytes that are not ASCII text") from None
    if not isinstance(v, str):
        raise ValueError(f"a {type(v).__name__} is not a date")
    s = v.strip()
    if len(s) > 40:
        raise ValueError("too long for a date")
    if len(s) in (4, 7) and s[:4].isdigit():          # "2021", "2021-03"
        return np.datetime64(s, "s")
    try:
        d = _dt.datetime.fromisoformat(s[:-1] + "+00:00" if s.endswith(("Z", "z")) else s)
    except ValueError:
        try:
            return _one(float(s)) if s.replace(".", "", 1).lstrip("-").isdigit() else \
                np.datetime64(s, "s")
        except ValueError:
            raise ValueError("not an ISO 8601 date or a Unix timestamp") from None
    return _one(d)


def parse_dates(values, name="dates"):
    """``datetime64[s]`` array of the dates, NaT where there is none.

    Parameters
    ----------
    values : array-like of shape (n,)
        ISO 8601 strings, Unix timestamps (seconds), ``datetime``/``date`` objects or
        ``datetime64`` values; empty strings, None, NaN and NaT are missing (infinity is
        no date: refused, in a list or in a float array).
    name : str
        The argument named in errors.

    Raises
    ------
    ValueError
        When ``values`` is not 1-D or a value is not a date (naming the row).
    """
    arr = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one date per document), got shape {arr.shape}")
    if arr.dtype.kind == "M":
        return arr.astype("datetime64[s]")
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)
    if arr.dtype.kind == "U":
        try:        # plain ISO dates in one go (numpy warns on "Z" and refuses offsets)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                return np.char.strip(arr).astype("datetime64[s]")
        except (ValueError, TypeError, DeprecationWarning, UserWarning):
            pass
    if arr.dtype.kind == "f":
        ok = ~np.isnan(arr)                       # NaN: missing; +-inf: no date, refused
        big = ok & ~(np.abs(np.where(ok, arr, 0)) <= _MAX_TIMESTAMP)
        if big.any():
            row = int(np.flatnonzero(big)[0])
            raise ValueError(f"{name}[{row}] = {float(arr[row])!r} is not a Unix timestamp "
                             f"in seconds")
        out = np.full(arr.shape, _NAT)
        out[ok] = np.floor(arr[ok]).astype(np.int64).astype("datetime64[s]")
        return out
    out = np.empty(arr.shape, dtype="datetime64[s]")
    for i, v in enumerate(arr.tolist() if arr.dtype.kind != "O" else arr):
        try:
            out[i] = _one(v)
        except (ValueError, OverflowError) as err:
            shown = repr(v)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ValueError(f"{name}[{i}] = {shown} is not a date ({err}); give ISO 8601 "
                             "dates (2021-03-04) or Unix timestamps") from None
    return out


def _index(days, period):
    """The index of the period holding each day (int64 days since 1970-01-01), counted
    from the period holding 1970-01-01."""
    days = np.asarray(days, dtype=np.int64)
    if period == "day":
        return days
    if period == "week":
        return (days + _MONDAY_SHIFT) // 7
    return days.astype("datetime64[D]").astype(_UNIT[period]).astype(np.int64)


def _first_day(index, period):
    """The first day (int64 days since 1970-01-01) of each period of :func:`_index`."""
    index = np.asarray(index, dtype=np.int64)
    if period == "day":
        return index
    if period == "week":
        return 7 * index - _MONDAY_SHIFT
    return index.astype(_UNIT[period]).astype("datetime64[D]").astype(np.int64)


def _count(lo, hi, period):
    """Number of periods from the one holding day ``lo`` to the one holding ``hi``."""
    return int(_index(hi, period) - _index(lo, period)) + 1


def choose_period(dates, max_periods=AUTO_MAX_PERIODS):
    """The finest of :data:`PERIODS` that cuts the dates' span into at most
    ``max_periods`` periods ("year" when none does; "day" without dates)."""
    days = np.asarray(dates).astype("datetime64[D]")
    days = days[~np.isnat(days)].astype(np.int64)
    if not days.size:
        return "day"
    lo, hi = int(days.min()), int(days.max())
    for period in PERIODS:
        if _count(lo, hi, period) <= max_periods:
            return period
    return "year"


def period_codes(dates, period="auto", name="period"):
    """Each date's period.

    Parameters
    ----------
    dates : datetime64 array of shape (n,)
        From :func:`parse_dates` (NaT: no date).
    period : {"auto", "day", "week", "month", "year"}
        Periods are calendar days, weeks from Monday, calendar months or years (UTC);
        "auto": :func:`choose_period`.
    name : str
        The argument named in errors.

    Returns
    -------
    period : str
        The period chosen.
    codes : ndarray of shape (n,), int64
        The index of each date's period, -1 without a date.
    labels : list of str
        One per period from the first date's to the last date's, empty ones included:
        ``2021-03-04`` (day), ``2021-03-01`` (the Monday of a week), ``2021-03`` (month),
        ``2021`` (year).
    starts : ndarray of shape (n_periods,), datetime64[D]
        The first day of each period.

    Raises
    ------
    ValueError
        For an unknown period, or more than :data:`MAX_PERIODS` periods.
    """
    if not isinstance(period, str) or period not in ("auto",) + PERIODS:
        raise ValueError(f"{name} must be one of 'auto', {', '.join(map(repr, PERIODS))}; "
                         f"got {period!r}")
    days_all = np.asarray(dates).astype("datetime64[D]")
    has = ~np.isnat(days_all)
    if period == "auto":
        period = choose_period(days_all)
    codes = np.full(days_all.shape, -1, dtype=np.int64)
    if not has.any():
        return period, codes, [], np.zeros(0, dtype="datetime64[D]")
    days = days_all[has].astype(np.int64)
    lo, hi = int(days.min()), int(days.max())
    n = _count(lo, hi, period)
    if n > MAX_PERIODS:
        coarser = [p for p in PERIODS if _count(lo, hi, p) <= MAX_PERIODS]
        raise ValueError(f"{name}={period!r} cuts the dates ({np.datetime64(lo, 'D')} to "
                         f"{np.datetime64(hi, 'D')}) into {n} periods, more than "
                         f"{MAX_PERIODS}: choose {coarser[0] if coarser else 'year'!r}")
    first = int(_index(lo, period))
    codes[has] = _index(days, period) - first
    starts = _first_day(np.arange(first, first + n), period).astype("datetime64[D]")
    labels = [str(s)[:_LABEL_CHARS[period]] for s in starts]
    return period, codes, labels, starts
