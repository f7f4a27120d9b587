"""The numbers of the Sandbox test users the tests use, by scenario (see docs/sandbox.md)."""

OTP_PASS, OTP_FAIL = "+12025550101", "+12025550102"
MOBILE_AUTH_PASS, MOBILE_AUTH_FAIL, FALLBACK = "+12025550103", "+12025550104", "+12025550105"
REPUTATION_FAIL, REVOKED_KEY, HARD_FAIL_NA = "+12025550106", "+12025550107", "+12025550108"
HARD_FAIL_INTL = "+61491570149"  # Australian, served by the US stack
VERIFIED_USER_FAIL = "+12025550110"  # belongs to solution "verified-user"
TOKEN_ONLY = "+12025550111"  # Kira Petrova: possession passes without a client SDK
EU_TOKEN_ONLY = "+353855550131"
NOT_A_TEST_USER = "+12025550199"
