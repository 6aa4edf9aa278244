"""Reference implementations run as oracles by the differential tests (never by the product)."""
