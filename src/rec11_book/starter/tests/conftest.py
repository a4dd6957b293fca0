"""The book's tests: `make check` runs those not marked build; `make test` runs them all."""


def pytest_configure(config):
    config.addinivalue_line("markers", "build: builds the whole book (slow)")
