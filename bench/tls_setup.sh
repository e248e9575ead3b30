# bench/tls_setup.sh: sourced by the benchmark scripts. tls_setup DIR writes
# a private CA and a broker certificate for 127.0.0.1 (ECDSA P-256, as
# docs/security.md makes them) and DIR/tls.toml, a broker configuration with
# one native TLS listener; the benchmark passes --listen to place it.
# Sets TLS_CA and TLS_CONFIG.
tls_setup() {
  local dir=$1
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/ca.key" -out "$dir/ca.pem" \
    -days 2 -subj "/CN=Tickwire bench CA" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/broker.key" -out "$dir/broker.csr" \
    -subj "/CN=127.0.0.1" 2>/dev/null
  printf "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n" >"$dir/broker.ext"
  openssl x509 -req -in "$dir/broker.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -out "$dir/broker.pem" -days 2 -extfile "$dir/broker.ext" 2>/dev/null
  cat >"$dir/tls.toml" <<CONF
[[listener]]
protocol = "native"
address = "127.0.0.1:0"
cert = "$dir/broker.pem"
key = "$dir/broker.key"
CONF
  TLS_CA=$dir/ca.pem
  TLS_CONFIG=$dir/tls.toml
}
