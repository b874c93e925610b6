# Sourced (not executed: keep this file without the x bit) by the mysql image's entrypoint on
# the lab source's first start, while its temporary server listens on the socket only:
# Lagscope's heartbeat table and accounts, with LAB_PASSWORD for every lab account.
: "${LAB_PASSWORD:?LAB_PASSWORD must be set for the lab profile (see deploy/env.example)}"

lab_sql_string() {  # a single-quoted SQL literal: backslashes and quotes doubled
	local s=${1//\\/\\\\}
	printf "'%s'" "${s//\'/\'\'}"
}

{
	printf 'SET @repl_password = %s;\n' "$(lab_sql_string "$LAB_PASSWORD")"
	printf 'SET @monitor_password = %s;\n' "$(lab_sql_string "$LAB_PASSWORD")"
	printf 'SET @heartbeat_password = %s;\n' "$(lab_sql_string "$LAB_PASSWORD")"
	cat "${LAGSCOPE_SQL_DIR:-/lagscope-sql}/10-heartbeat.sql" \
		"${LAGSCOPE_SQL_DIR:-/lagscope-sql}/20-users.sql"
} | docker_process_sql
