-- Devices keep no IDFA, and only keyed digests of the IDFV and the Wi-Fi names (written by the
-- next device start): values stored before are cleared here.

UPDATE devices SET idfa = NULL, idfv = NULL, wifi_ssid = NULL, wifi_bssid = NULL;
