# Sourced (not executed: keep this file without the x bit) by the mysql image's entrypoint on a
# lab replica's first start: replicate from LAB_SOURCE_HOST (the source, or the far link in
# front of it) with GTID auto-positioning, as the lagscope_repl account the source created.
: "${LAB_PASSWORD:?LAB_PASSWORD must be set for the lab profile (see deploy/env.example)}"
: "${LAB_SOURCE_HOST:?LAB_SOURCE_HOST names the source (set in docker-compose.yml)}"

lab_sql_string() {  # a single-quoted SQL literal: backslashes and quotes doubled
	local s=${1//\\/\\\\}
	printf "'%s'" "${s//\'/\'\'}"
}

# GET_SOURCE_PUBLIC_KEY: caching_sha2_password over a connection without TLS needs the
# source's RSA key. Connect retry 5 s, heartbeat 1 s: a restarted source is found quickly.
docker_process_sql <<-EOSQL
	CHANGE REPLICATION SOURCE TO
	  SOURCE_HOST = $(lab_sql_string "$LAB_SOURCE_HOST"),
	  SOURCE_PORT = 3306,
	  SOURCE_USER = 'lagscope_repl',
	  SOURCE_PASSWORD = $(lab_sql_string "$LAB_PASSWORD"),
	  SOURCE_AUTO_POSITION = 1,
	  GET_SOURCE_PUBLIC_KEY = 1,
	  SOURCE_CONNECT_RETRY = 5,
	  SOURCE_HEARTBEAT_PERIOD = 1;
	START REPLICA;
EOSQL
