"""Company names as people wrote them, from the PyPI package company-graph 0.5.3 (MIT):
its graph.pkl maps names typed on professional profiles (lower-cased, punctuation and a few
stop words such as 'inc', 'group', 'the' stripped by the package; some kept as typed) to the
company page each profile linked, with redirects between pages (renames, acquisitions).

Writes CSV rows `name,company,count` to stdout: each name, the page it resolves to (the
package's own CompanyGraph.id2id: follow the redirect of greater weight), and how many
profiles wrote it. Reads the pickle without networkx: its classes are stood in for.

Usage: company-names.py graph.pkl > names.csv
"""

import csv
import pickle
import sys


class Stand:
    """Any class the pickle names: keeps its state as a dict."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        self.__dict__.update(state if isinstance(state, dict) else {})


class Loader(pickle.Unpickler):
    def find_class(self, module, name):
        if module.startswith("networkx"):
            return Stand
        return super().find_class(module, name)


with open(sys.argv[1], "rb") as f:
    graph = Loader(f).load()
adj = graph._adj if hasattr(graph, "_adj") else graph._succ
nodes = graph._node


def resolve(item, seen=()):
    """company_graph.cg.CompanyGraph.id2id, with a guard against cycles."""
    routes = adj.get(item) or {}
    if not routes:
        return item
    current = nodes.get(item, {}).get("g", 0)
    target, data = max(routes.items(), key=lambda x: x[1].get("g", 0))
    if current >= data.get("g", 0) or target in seen:
        return item
    return resolve(target, seen + (item,))


out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["name", "company", "count"])
rows = []
for name, routes in adj.items():
    if not isinstance(name, str):
        continue
    for page, data in routes.items():
        if "n" in data:
            rows.append((name.strip(), resolve(page), data["n"]))
for name, company, count in sorted(rows, key=lambda r: (r[1], r[0])):
    if name:
        out.writerow([name, company, count])
