"""Report writers: terminal table, JSON, JUnit XML and a self-contained HTML page."""
