-- Lagscope's accounts on the lab's source; they replicate to the replicas. The passwords arrive
-- as user variables (@repl_password, @monitor_password, @heartbeat_password) set by
-- init-source/10-lagscope.sh, and go into CREATE USER through QUOTE() and a prepared statement,
-- so no password is ever spliced into SQL text by the shell. Runs on MySQL 8.0 and MariaDB.

-- Replication: the replicas' own login.
SET @stmt = CONCAT('CREATE USER IF NOT EXISTS ''lagscope_repl''@''%'' IDENTIFIED BY ', QUOTE(@repl_password));
PREPARE stmt FROM @stmt;
EXECUTE stmt;
DEALLOCATE PREPARE stmt;
GRANT REPLICATION SLAVE ON *.* TO 'lagscope_repl'@'%';

-- Monitoring: read-only (README: "Monitoring your own servers"). This is MySQL's grant; on
-- MariaDB 10.5.9+ the same statements parse (REPLICATION CLIENT is BINLOG MONITOR there) but
-- SHOW ALL SLAVES STATUS also needs REPLICA MONITOR: grant BINLOG MONITOR, REPLICA MONITOR.
SET @stmt = CONCAT('CREATE USER IF NOT EXISTS ''lagscope_monitor''@''%'' IDENTIFIED BY ', QUOTE(@monitor_password));
PREPARE stmt FROM @stmt;
EXECUTE stmt;
DEALLOCATE PREPARE stmt;
GRANT REPLICATION CLIENT, PROCESS ON *.* TO 'lagscope_monitor'@'%';
GRANT SELECT ON performance_schema.* TO 'lagscope_monitor'@'%';
GRANT SELECT ON lagscope.* TO 'lagscope_monitor'@'%';

-- Heartbeat writer: this table only (10-heartbeat.sql must have run).
SET @stmt = CONCAT('CREATE USER IF NOT EXISTS ''lagscope_heartbeat''@''%'' IDENTIFIED BY ', QUOTE(@heartbeat_password));
PREPARE stmt FROM @stmt;
EXECUTE stmt;
DEALLOCATE PREPARE stmt;
GRANT INSERT, UPDATE, SELECT ON lagscope.heartbeat TO 'lagscope_heartbeat'@'%';
