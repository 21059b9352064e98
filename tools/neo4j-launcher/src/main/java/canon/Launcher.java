package canon;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.io.ByteUnit;

/**
 * A Neo4j Community server for canon's tests: embedded Neo4j with only the Bolt connector, on
 * 127.0.0.1, authentication on. Arguments: HOME PORT PASSWORD. It runs until killed (SIGTERM
 * shuts the database down cleanly through the shutdown hook). A failure while starting exits
 * the JVM (status 1) instead of leaving a server that never said it listens.
 */
public final class Launcher {
    public static void main(String[] args) throws Exception {
        try {
            start(args);
        } catch (Throwable failure) {
            failure.printStackTrace();
            System.exit(1);
        }
        new CountDownLatch(1).await();
    }

    private static void start(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: Launcher HOME PORT PASSWORD");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        String password = args[2];
        Files.createDirectories(home);

        DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                // A test server on a small shared machine: a small page cache and transaction
                // memory, no anonymous usage report. CANON_NEO4J_PAGECACHE_MB raises the cache
                // for benchmarks (a million entities do not fit in 128 MiB).
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMb()))
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // A statement canon gave up on stops here too, instead of holding its locks and
                // a thread for however long it takes: canon's READ_TIME_LIMIT (50 s), under its
                // 60 s wait. CANON_NEO4J_TX_TIMEOUT_MS lowers it to see what Neo4j answers.
                .setConfig(GraphDatabaseSettings.transaction_timeout, java.time.Duration.ofMillis(transactionTimeoutMs()))
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(service::shutdown));

        // The initial password of the `neo4j` user: set through the system database, as
        // `neo4j-admin dbms set-initial-password` would (only while it is still the default).
        GraphDatabaseService system = service.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        try {
            system.executeTransactionally(
                    "ALTER USER neo4j IF EXISTS SET PASSWORD $password CHANGE NOT REQUIRED",
                    java.util.Map.of("password", password));
        } catch (QueryExecutionException refused) {
            // A start on data an earlier start set up: the password is this one already, and
            // Neo4j refuses to set a password to itself.
            if (!String.valueOf(refused.getMessage()).contains("Old password and new password cannot be the same")) {
                throw refused;
            }
        }

        // Answer one query before saying so: the caller waits on this line (and on Bolt).
        service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
        System.out.println("neo4j " + org.neo4j.kernel.internal.Version.getNeo4jVersion()
                + " listening on bolt://127.0.0.1:" + port);
        System.out.flush();
    }

    private static long transactionTimeoutMs() {
        String value = System.getenv("CANON_NEO4J_TX_TIMEOUT_MS");
        return value == null || value.isBlank() ? 50_000 : Long.parseLong(value.trim());
    }

    private static long pageCacheMb() {
        String value = System.getenv("CANON_NEO4J_PAGECACHE_MB");
        return value == null || value.isBlank() ? 128 : Long.parseLong(value.trim());
    }
}
