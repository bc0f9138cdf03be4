-- TPC-H's eight tables at scale factor 0.01 (row counts, key relations, value domains and types of the
-- specification), made by DuckDB from hashes of the keys so that they are the same on every run. Not dbgen's
-- text: every query's predicates select rows, which is what the whole-plan tests need. Statements end with ';'.
CREATE MACRO rnd(k, salt, n) AS CAST(hash(k, salt) % n AS BIGINT);
CREATE MACRO money(cents) AS CAST(CAST(cents AS DECIMAL(15,0)) * 0.01 AS DECIMAL(15,2));
CREATE MACRO phone(k, nation) AS CAST(nation + 10 AS VARCHAR) || '-' || CAST(100 + rnd(k, 'p1', 900) AS VARCHAR)
  || '-' || CAST(100 + rnd(k, 'p2', 900) AS VARCHAR) || '-' || CAST(1000 + rnd(k, 'p3', 9000) AS VARCHAR);
CREATE MACRO retail(k) AS money(90000 + (k // 10) % 20001 + 100 * (k % 1000));
CREATE TABLE region AS SELECT CAST(k AS INTEGER) AS r_regionkey, name AS r_name, 'region ' || name AS r_comment
FROM (VALUES (0, 'AFRICA'), (1, 'AMERICA'), (2, 'ASIA'), (3, 'EUROPE'), (4, 'MIDDLE EAST')) t(k, name);
CREATE TABLE nation AS SELECT CAST(k AS INTEGER) AS n_nationkey, name AS n_name, CAST(r AS INTEGER) AS n_regionkey,
  'nation ' || name AS n_comment
FROM (VALUES (0, 'ALGERIA', 0), (1, 'ARGENTINA', 1), (2, 'BRAZIL', 1), (3, 'CANADA', 1), (4, 'EGYPT', 4),
  (5, 'ETHIOPIA', 0), (6, 'FRANCE', 3), (7, 'GERMANY', 3), (8, 'INDIA', 2), (9, 'INDONESIA', 2), (10, 'IRAN', 4),
  (11, 'IRAQ', 4), (12, 'JAPAN', 2), (13, 'JORDAN', 4), (14, 'KENYA', 0), (15, 'MOROCCO', 0), (16, 'MOZAMBIQUE', 0),
  (17, 'PERU', 1), (18, 'CHINA', 2), (19, 'ROMANIA', 3), (20, 'SAUDI ARABIA', 4), (21, 'VIETNAM', 2),
  (22, 'RUSSIA', 3), (23, 'UNITED KINGDOM', 3), (24, 'UNITED STATES', 1)) t(k, name, r);
CREATE TABLE supplier AS SELECT CAST(k AS INTEGER) AS s_suppkey, 'Supplier#' || lpad(CAST(k AS VARCHAR), 9, '0') AS s_name,
  'address ' || rnd(k, 'sa', 100000) AS s_address, CAST(n AS INTEGER) AS s_nationkey, phone(k, n) AS s_phone,
  money(rnd(k, 'sb', 1099998) - 99999) AS s_acctbal,
  CASE WHEN k % 20 = 3 THEN 'wake Customer slyly about the Complaints' WHEN k % 20 = 7 THEN 'Customer recommends'
    ELSE 'quick deposits ' || rnd(k, 'sc', 1000) END AS s_comment
FROM (SELECT k, k % 25 AS n FROM range(1, 101) t(k));
CREATE TABLE part AS SELECT CAST(k AS INTEGER) AS p_partkey,
  w[1 + rnd(k, 'n1', 30)] || ' ' || w[1 + rnd(k, 'n2', 30)] || ' ' || w[1 + rnd(k, 'n3', 30)] AS p_name,
  'Manufacturer#' || m AS p_mfgr, 'Brand#' || m || (1 + rnd(k, 'b', 5)) AS p_brand,
  ['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'][1 + rnd(k, 't1', 6)] || ' '
    || ['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'][1 + rnd(k, 't2', 5)] || ' '
    || ['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'][1 + rnd(k, 't3', 5)] AS p_type,
  CAST(1 + rnd(k, 'sz', 50) AS INTEGER) AS p_size,
  ['SM', 'LG', 'MED', 'JUMBO', 'WRAP'][1 + rnd(k, 'c1', 5)] || ' '
    || ['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'][1 + rnd(k, 'c2', 8)] AS p_container,
  retail(k) AS p_retailprice, 'part ' || rnd(k, 'pc', 1000) AS p_comment
FROM (SELECT k, 1 + rnd(k, 'm', 5) AS m, ['almond', 'antique', 'aquamarine', 'azure', 'beige', 'bisque', 'black',
  'blanched', 'blue', 'blush', 'brown', 'burlywood', 'chartreuse', 'chiffon', 'chocolate', 'coral', 'cornflower',
  'cream', 'cyan', 'dark', 'deep', 'dim', 'dodger', 'drab', 'firebrick', 'forest', 'frosted', 'ghost', 'green',
  'honeydew'] AS w FROM range(1, 2001) t(k));
CREATE TABLE partsupp AS SELECT CAST(k AS INTEGER) AS ps_partkey,
  CAST((k + j * (25 + (k - 1) // 100)) % 100 + 1 AS INTEGER) AS ps_suppkey,
  CAST(1 + rnd(k * 4 + j, 'pa', 9999) AS INTEGER) AS ps_availqty, money(100 + rnd(k * 4 + j, 'ps', 99901)) AS ps_supplycost,
  'partsupp ' || rnd(k * 4 + j, 'pc', 1000) AS ps_comment
FROM range(1, 2001) t(k), range(0, 4) s(j);
CREATE TABLE customer AS SELECT CAST(k AS INTEGER) AS c_custkey, 'Customer#' || lpad(CAST(k AS VARCHAR), 9, '0') AS c_name,
  'address ' || rnd(k, 'ca', 100000) AS c_address, CAST(n AS INTEGER) AS c_nationkey, phone(k, n) AS c_phone,
  money(rnd(k, 'cb', 1099998) - 99999) AS c_acctbal,
  ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'HOUSEHOLD', 'MACHINERY'][1 + rnd(k, 'cm', 5)] AS c_mktsegment,
  'customer ' || rnd(k, 'cc', 1000) AS c_comment
FROM (SELECT k, rnd(k, 'cn', 25) AS n FROM range(1, 1501) t(k));
CREATE TABLE orders_base AS SELECT CAST(k AS INTEGER) AS o_orderkey,
  CAST(CASE WHEN c % 3 = 0 THEN c - 1 ELSE c END AS INTEGER) AS o_custkey,
  CAST(DATE '1992-01-01' + CAST(rnd(k, 'od', 2255) AS INTEGER) AS DATE) AS o_orderdate,
  ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'][1 + rnd(k, 'op', 5)] AS o_orderpriority,
  'Clerk#' || lpad(CAST(1 + rnd(k, 'ck', 10) AS VARCHAR), 9, '0') AS o_clerk, CAST(0 AS INTEGER) AS o_shippriority,
  CASE WHEN k % 17 = 0 THEN 'pending special deposits sleep: requests' ELSE 'regular ' || rnd(k, 'oc', 1000) END
    AS o_comment
FROM (SELECT k, 1 + rnd(k, 'ou', 1500) AS c FROM range(1, 15001) t(k));
CREATE TABLE lineitem AS SELECT o_orderkey AS l_orderkey, CAST(pk AS INTEGER) AS l_partkey,
  CAST((pk + j * (25 + (pk - 1) // 100)) % 100 + 1 AS INTEGER) AS l_suppkey, CAST(n AS INTEGER) AS l_linenumber,
  CAST(q AS DECIMAL(15,2)) AS l_quantity, CAST(q * retail(pk) AS DECIMAL(15,2)) AS l_extendedprice,
  money(rnd(id, 'ld', 11)) AS l_discount, money(rnd(id, 'lt', 9)) AS l_tax,
  CASE WHEN receipt <= DATE '1995-06-17' THEN ['R', 'A'][1 + rnd(id, 'lr', 2)] ELSE 'N' END AS l_returnflag,
  CASE WHEN ship > DATE '1995-06-17' THEN 'O' ELSE 'F' END AS l_linestatus,
  ship AS l_shipdate, commit AS l_commitdate, receipt AS l_receiptdate,
  ['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'][1 + rnd(id, 'li', 4)] AS l_shipinstruct,
  ['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'][1 + rnd(id, 'lm', 7)] AS l_shipmode,
  'lineitem ' || rnd(id, 'lc', 1000) AS l_comment
FROM (SELECT o_orderkey, n, id, pk, j, q, ship, commit, CAST(ship + CAST(1 + rnd(id, 'lv', 30) AS INTEGER) AS DATE) AS receipt
  FROM (SELECT o_orderkey, n, id, 1 + rnd(id, 'lp', 2000) AS pk, rnd(id, 'ls', 4) AS j,
      CASE WHEN o_orderkey % 50 = 0 THEN 45 + rnd(id, 'lq', 6) ELSE 1 + rnd(id, 'lq', 50) END AS q,
      CAST(o_orderdate + CAST(1 + rnd(id, 'lh', 121) AS INTEGER) AS DATE) AS ship,
      CAST(o_orderdate + CAST(30 + rnd(id, 'lk', 61) AS INTEGER) AS DATE) AS commit
    FROM (SELECT o_orderkey, o_orderdate, n, o_orderkey * 8 + n AS id FROM orders_base, range(1, 8) r(n)
      WHERE n <= 1 + rnd(o_orderkey, 'lc', 7))));
CREATE TABLE orders AS SELECT o.o_orderkey, o_custkey,
  CASE WHEN bool_and(l_linestatus = 'F') THEN 'F' WHEN bool_and(l_linestatus = 'O') THEN 'O' ELSE 'P' END AS o_orderstatus,
  CAST(sum(l_extendedprice * (1 + l_tax) * (1 - l_discount)) AS DECIMAL(15,2)) AS o_totalprice,
  o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment
FROM orders_base o JOIN lineitem ON l_orderkey = o.o_orderkey
GROUP BY ALL ORDER BY o.o_orderkey;
