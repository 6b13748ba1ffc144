"""Results database, migrations and export."""
