"""Santa Maria's text table (placeholder while it is written)."""
from referee.core.texttable import TextTable

TABLE = TextTable()
