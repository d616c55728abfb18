#if __has_include(<sqlite3.h>)
#include <sqlite3.h>
#else
#error "SQLite's headers are missing: install them with 'apt-get install libsqlite3-dev' (Debian, Ubuntu; script/bootstrap does) or 'brew install sqlite'"
#endif
