"""Small shared helpers with no compass dependencies."""
