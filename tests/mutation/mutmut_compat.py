"""A pytest plugin for ``make mutants``: mutmut 3.8 reads ``item._nodeid``, which pytest 9
renamed; each collected test gets the attribute back, holding its node id."""


def pytest_collection_modifyitems(items):
    for item in items:
        if not hasattr(item, "_nodeid"):
            item._nodeid = item.nodeid
