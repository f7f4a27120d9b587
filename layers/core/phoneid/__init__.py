"""PhoneID: phone possession and identity verification, as a serverless AWS service."""
