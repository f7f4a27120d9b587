"""The HTTP edge shared by every handler: request/response models, error mapper, resolver factory;
and the Connect workflow's step inputs and results (``connect_steps``), the state machine's edge."""
