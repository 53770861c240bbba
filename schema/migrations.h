/*
 * migrations.h - the schema migrations compiled into the binary.
 *
 * The table is generated at build time by schema/embed.py from the
 * schema/NNNN_name.sql files and their PostgreSQL texts schema/pg/NNNN_name.sql:
 * entry i has version i + 1 and holds the SQL that moves a database from
 * version i to i + 1 (SQLite: PRAGMA user_version; PostgreSQL: the
 * vep_schema table). Only authority/store/db.c and store/pg.c read it;
 * nothing may edit a released migration, only add the next one.
 */
#ifndef VEP_SCHEMA_MIGRATIONS_H
#define VEP_SCHEMA_MIGRATIONS_H

#include <stddef.h>

struct db_migration {
	int version;        /* PRAGMA user_version after this migration */
	const char *name;   /* file name, for messages */
	const char *sql;    /* SQLite: one or more statements */
	const char *pg_sql; /* PostgreSQL: the same step (schema/pg/) */
};

extern const struct db_migration db_migrations[];
extern const size_t db_migrations_count;

#endif
