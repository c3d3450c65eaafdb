"""The result objects of the map's statistics (countgrid.grid's compare_groups,
shares_by_period, region_effects): dicts whose keys are also attributes, and tables that
become pandas DataFrames when pandas is installed (it is not a dependency)."""

__all__ = ["ResultDict", "TableResult", "region_names"]


class ResultDict(dict):
    """A dict whose keys are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def region_names(names, n_regions):
    """The regions' names of a table: ``names`` as str (``n_regions`` distinct ones), or
    ``"region 0"``, ... by default (ValueError naming ``names`` otherwise)."""
    if names is None:
        return [f"region {r}" for r in range(n_regions)]
    names = [str(v) for v in names]
    if len(names) != n_regions or len(set(names)) != n_regions:
        raise ValueError(f"names must be {n_regions} distinct names, one per region, got "
                         f"{len(names)}")
    return names


class TableResult(ResultDict):
    """A result with a ``table(names=None)`` of columns (a dict of lists and arrays)."""

    def to_frame(self, names=None):
        """:meth:`table` as a pandas DataFrame (needs pandas).

        Parameters
        ----------
        names : sequence of str, optional
            The regions' names, as for :meth:`table`.

        Returns
        -------
        pandas.DataFrame
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(f"{type(self).__name__}.to_frame needs pandas (pip install "
                              "pandas); table() gives the same columns as a dict") from None
        frame = pd.DataFrame(self.table(names))
        return frame.set_index(self._frame_index) if self._frame_index else frame

    _frame_index = None
