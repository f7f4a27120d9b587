"""The HTTP edge shared by every handler: request/response models, error mapper, resolver factory."""
