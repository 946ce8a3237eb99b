-- Request signatures: each device start rotates the device's signing key by bumping its epoch (the
-- key is derived from the master key, the device and the epoch, and never stored).

ALTER TABLE devices ADD COLUMN key_epoch integer NOT NULL DEFAULT 0;
