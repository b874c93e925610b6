-- Lagscope's heartbeat table (docs/replication.md, "The heartbeat table"): one row per source server_id, written on the source
-- every 0.25 s by `lagscope heartbeat` and read on every replica. The same DDL as the MariaDB
-- lab's (backend/lagscope/lab/topology.py); flavor-neutral, tested against MariaDB.
CREATE DATABASE IF NOT EXISTS lagscope;
CREATE TABLE IF NOT EXISTS lagscope.heartbeat (
  server_id INT UNSIGNED NOT NULL PRIMARY KEY,
  ts DATETIME(6) NOT NULL
) ENGINE=InnoDB;
