# webhook_lib.sh — the admission webhook of the webhook conformance scripts (sourced after
# lib.sh and kc_setup): kc_webhook_start makes a CA and a certificate for wh.default.svc in
# $KC_TMP, starts admission_webhook.py on a loopback port and sets WH_PORT and WH_CA (the CA
# certificate, base64, for caBundle). Returns 1 when either step fails.
kc_webhook_start() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
        -subj /CN=test-ca -keyout "$KC_TMP/ca.key" -out "$KC_TMP/ca.crt" 2>/dev/null &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=wh.default.svc \
            -keyout "$KC_TMP/wh.key" -out "$KC_TMP/wh.csr" 2>/dev/null &&
        printf 'subjectAltName=DNS:wh.default.svc\n' >"$KC_TMP/ext" &&
        openssl x509 -req -in "$KC_TMP/wh.csr" -CA "$KC_TMP/ca.crt" -CAkey "$KC_TMP/ca.key" \
            -CAcreateserial -days 1 -extfile "$KC_TMP/ext" -out "$KC_TMP/wh.crt" 2>/dev/null ||
        { echo "FAIL: certificates"; return 1; }
    WH_CA=$(base64 -w0 <"$KC_TMP/ca.crt")
    /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/admission_webhook.py" "$KC_TMP/wh.crt" \
        "$KC_TMP/wh.key" "$KC_TMP/port" &
    KC_PIDS="$KC_PIDS $!"
    wait_for 20 test -s "$KC_TMP/port" || { echo "FAIL: webhook did not start"; return 1; }
    WH_PORT=$(cat "$KC_TMP/port")
}
