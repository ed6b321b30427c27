"""Fetch structures for Session.run: nested lists, tuples, namedtuples and dicts of graph elements."""

from tensorweave.framework.operation import Operation
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import fetch_conversion


class FetchPlan:
    """Flattens a fetch structure into unique tensors and target ops, and rebuilds results."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.tensors = []
        self.targets = []
        self._tensor_pos = {}
        self._builder = self._parse(fetches)

    def _element(self, obj):
        if hasattr(obj, "_as_graph_element") and not isinstance(obj, (Tensor, Operation)):
            obj = obj._as_graph_element()
        try:
            elem = self.graph.as_graph_element(obj)
        except (TypeError, ValueError, KeyError) as e:
            raise type(e)(f"cannot fetch {obj!r}: {e}") from None
        if isinstance(elem, Operation):
            if elem not in self.targets:
                self.targets.append(elem)
            return lambda values: None
        pos = self._tensor_pos.get(elem)
        if pos is None:
            pos = self._tensor_pos[elem] = len(self.tensors)
            self.tensors.append(elem)
        return lambda values: values[pos]

    def _parse(self, fetch):
        if fetch is None:
            raise TypeError("fetch argument None is invalid: fetch a Tensor, an Operation or their names")
        conversion = fetch_conversion(fetch)
        if conversion is not None:
            expand, combine = conversion
            subs = [self._parse(x) for x in expand(fetch)]
            return lambda values: combine([b(values) for b in subs])
        if isinstance(fetch, (list, tuple)):
            subs = [self._parse(x) for x in fetch]
            if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):
                return lambda values: type(fetch)(*[b(values) for b in subs])
            kind = type(fetch)
            return lambda values: kind(b(values) for b in subs)
        if isinstance(fetch, dict):
            subs = {k: self._parse(v) for k, v in fetch.items()}
            kind = type(fetch)
            return lambda values: kind((k, b(values)) for k, b in subs.items())
        return self._element(fetch)

    def build(self, values):
        return self._builder(values)
