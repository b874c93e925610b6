-- Lagscope's accounts on the lab's source; they replicate to the replicas. The passwords arrive
-- as user variables (@repl_password, @monitor_password, @heartbeat_password) set by
-- init-source/10-lagscope.sh, and go into CREATE USER through QUOTE() and a prepared statement,
-- so no password is ever spliced into SQL text by the shell. Runs on MySQL 8.0 and MariaDB.

-- Lagscope's own two logins use mysql_native_password on MySQL (a challenge-response: the
-- password never crosses the wire). MySQL 8.0's default, caching_sha2_password, needs the
-- password itself at the first login after every server start, and Lagscope sends it only over
-- TLS whose certificate it verified (or under a pinned public key); the lab's servers offer
-- TLS with the self-signed certificate MySQL generates, which the default tls=preferred does
-- not verify, so every poll after a restart would be refused. On your own servers, prefer
-- caching_sha2_password with tls=verify_ca and the server's CA (README: "TLS to monitored
-- servers"). MariaDB's default is mysql_native_password already (and it refuses the WITH
-- ... BY form).
SET @lagscope_auth = IF(VERSION() LIKE '%MariaDB%', ' IDENTIFIED BY ', ' IDENTIFIED WITH mysql_native_password BY ');

-- Replication: the replicas' own login.
SET @stmt = CONCAT('CREATE USER IF NOT EXISTS ''lagscope_repl''@''%'' IDENTIFIED BY ', QUOTE(@repl_password));
PREPARE stmt FROM @stmt;
EXECUTE stmt;
DEALLOCATE PREPARE stmt;
GRANT REPLICATION SLAVE ON *.* TO 'lagscope_repl'@'%';

-- Monitoring: read-only (README: "Monitoring your own servers"). This is MySQL's grant; on
-- MariaDB 10.5.9+ the same statements parse (REPLICATION CLIENT is BINLOG MONITOR there) but
-- SHOW ALL SLAVES STATUS also needs REPLICA MONITOR: grant BINLOG MONITOR, REPLICA MONITOR.
SET @stmt = CONCAT('CREATE USER IF NOT EXISTS ''lagscope_monitor''@''%''', @lagscope_auth, QUOTE(@monitor_password));
PREPARE stmt FROM @stmt;
EXECUTE stmt;
DEALLOCATE PREPARE stmt;
GRANT REPLICATION CLIENT, PROCESS ON *.* TO 'lagscope_monitor'@'%';
GRANT SELECT ON performance_schema.* TO 'lagscope_monitor'@'%';
GRANT SELECT ON lagscope.* TO 'lagscope_monitor'@'%';

-- Heartbeat writer: this table only (10-heartbeat.sql must have run).
SET @stmt = CONCAT('CREATE USER IF NOT EXISTS ''lagscope_heartbeat''@''%''', @lagscope_auth, QUOTE(@heartbeat_password));
PREPARE stmt FROM @stmt;
EXECUTE stmt;
DEALLOCATE PREPARE stmt;
GRANT INSERT, UPDATE, SELECT ON lagscope.heartbeat TO 'lagscope_heartbeat'@'%';
